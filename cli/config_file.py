"""Round-trip edits of a config file that keep the user's comments, key order, quoting and indentation.

`with_value` goes through ruamel's round-trip mode; `without` cuts the entry's lines from the text
itself, so nothing else in the file changes by a byte (ruamel would drop the comment lines that follow
a deleted key: it keeps them with that key). Nothing here validates; `arreio config` checks the result
the way a run would before writing it.
"""

from __future__ import annotations

from typing import Any


def parse_value(text: str) -> Any:
    """VALUE as YAML, as it would read in the file: `80` an int, `[shell]` a list, `off` a string."""
    from arreio.engine.core.errors import UsageError

    return load_text(text, error=UsageError, what="VALUE")


def load_text(text: str, *, error: type, what: str) -> Any:
    """`text` read the way a run reads a config (safe, bounded); a YAML mistake is `error` naming `what`."""
    from ruamel.yaml import YAMLError

    from arreio.engine.core.yaml_file import load_yaml

    try:
        return load_yaml(text)
    except YAMLError as exc:
        raise error(f"{what} is not valid YAML: {getattr(exc, 'problem', None) or exc}") from None


def _round_trip(text: str) -> Any:
    """A ruamel round-trip YAML indenting new blocks the way the file already does."""
    import re

    from arreio.engine.core.yaml_file import yaml_loader

    mapping = next((len(m.group(2)) for m in re.finditer(r"^(\S[^\n]*:)[ \t]*\n( +)[^\s-]", text, re.M)), 2)
    dash = next(
        (
            len(m.group(2)) - len(m.group(1))
            for m in re.finditer(r"^( *)\S[^\n]*:[ \t]*\n( *)- ", text, re.M)
            if len(m.group(2)) >= len(m.group(1))
        ),
        None,
    )
    offset = 2 if dash is None else dash  # "  - item" unless the file writes "- item" under its key
    yaml = yaml_loader("rt")
    yaml.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap the user's long lines
    return yaml


def _document(yaml: Any, text: str) -> tuple[Any, str]:
    """(the top-level mapping, text to keep before it: a file of comments only has no mapping)."""
    from ruamel.yaml.comments import CommentedMap

    from arreio.engine.core.errors import ConfigError

    try:
        doc = yaml.load(text) if text.strip() else None
    except Exception as exc:  # noqa: BLE001 - ruamel's many error kinds; the run's reader says it too
        raise ConfigError(f"invalid config: {getattr(exc, 'problem', None) or exc}") from None
    if doc is None:
        return CommentedMap(), text if text.endswith("\n") or not text else text + "\n"
    if not isinstance(doc, CommentedMap):
        raise ConfigError("invalid config: expected a mapping at the top level")
    return doc, ""


def with_value(text: str, parts: list[str], value: Any) -> str:
    """`text` with `parts` set to `value`; missing sections are added at the end, in order."""
    import io

    from ruamel.yaml.comments import CommentedMap

    from arreio.engine.core.errors import UsageError

    yaml = _round_trip(text)
    doc, head = _document(yaml, text)
    node = doc
    for i, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = CommentedMap()
        elif not isinstance(child, dict):
            raise UsageError(
                f"cannot set '{'.'.join(parts)}': '{'.'.join(parts[: i + 1])}' is {child!r}, not a section"
            )
        node = child
    leaf = parts[-1]
    old = node.get(leaf)
    kept = _trailing_lines(node, leaf) if leaf in node else ""
    node[leaf] = _commented(value, flow=bool(getattr(old, "fa", None) and old.fa.flow_style()))
    if kept:  # the comment lines after a replaced block belong to what follows it: keep them
        _append_after(node, leaf, kept)
    out = io.StringIO()
    yaml.dump(doc, out)
    return head + out.getvalue()


def _commented(value: Any, *, flow: bool = False) -> Any:
    """Plain lists and dicts as ruamel's own nodes, which can carry comments; `flow` keeps a value
    the file wrote inline (`[a, b]`) inline."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict):
        node: Any = CommentedMap((k, _commented(v)) for k, v in value.items())
    elif isinstance(value, list):
        node = CommentedSeq(_commented(v) for v in value)
    else:
        return value
    if flow:
        node.fa.set_flow_style()
    return node


def _tail_slot(node: Any, key: Any) -> tuple[list, int]:
    """Where ruamel keeps the comment that follows entry `key` of a block `node`: with its last
    leaf (`[key][2]` in a mapping, `[index][0]` in a sequence)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    value = node[key]
    if isinstance(value, (CommentedMap, CommentedSeq)) and len(value) and not value.fa.flow_style():
        return _tail_slot(value, list(value)[-1] if isinstance(value, CommentedMap) else len(value) - 1)
    slots = node.ca.items.setdefault(key, [None, None, None, None])
    return slots, 0 if isinstance(node, CommentedSeq) else 2


def _trailing_lines(node: Any, key: Any) -> str:
    """The whole comment lines after a block value (its own end-of-line comment goes with it)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    value = node[key]
    if not (isinstance(value, (CommentedMap, CommentedSeq)) and len(value)) or value.fa.flow_style():
        return ""
    slots, i = _tail_slot(node, key)
    token = slots[i]
    return token.value.split("\n", 1)[1] if token is not None and "\n" in token.value else ""


def _append_after(node: Any, key: Any, lines: str) -> None:
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    slots, i = _tail_slot(node, key)
    if slots[i] is None:
        slots[i] = CommentToken("\n" + lines, CommentMark(0), None)
    else:
        slots[i].value = slots[i].value + lines


def without(text: str, parts: list[str]) -> str | None:
    """`text` with the entry at `parts` cut out (None: not there). The lines are cut from the text
    itself, so every other byte stays; a section left empty goes too. A flow mapping (`{a: 1}`) on
    the way is edited through ruamel instead."""
    import io

    yaml = _round_trip(text)
    doc, _ = _document(yaml, text)
    chain = [doc]
    for part in parts[:-1]:
        child = chain[-1].get(part) if isinstance(chain[-1], dict) else None
        if not isinstance(child, dict):
            return None
        chain.append(child)
    if not isinstance(chain[-1], dict) or parts[-1] not in chain[-1]:
        return None
    depth = len(parts) - 1
    while depth > 0 and len(chain[depth]) == 1:  # the only key: the section goes with it
        depth -= 1
    node, key = chain[depth], parts[depth]
    if any(c.fa.flow_style() for c in chain[: depth + 1]):
        del node[key]
        out = io.StringIO()
        yaml.dump(doc, out)
        return out.getvalue()
    return _cut_lines(text, node, key)


def _cut_lines(text: str, node: Any, key: Any) -> str:
    """Remove entry `key` of block mapping `node`: its line and every line deeper than it (a
    sequence may sit at the key's own column). Whole-line comments in it stay where they are (a
    comment is valid at any indentation), and so does everything after its last line."""
    lines = text.splitlines(keepends=True)
    start, column = node.lc.key(key)
    value = node[key]
    dashes_at_column = isinstance(value, list) and not value.fa.flow_style()

    def inside(line: str) -> bool:
        body, indent = line.strip(), len(line) - len(line.lstrip(" "))
        return (
            not body
            or body.startswith("#")
            or indent > column
            or (dashes_at_column and indent == column and body.startswith("-"))
        )

    end = scan = start + 1  # end: past the block's last line of content
    while scan < len(lines) and inside(lines[scan]):
        scan += 1
        if lines[scan - 1].strip() and not lines[scan - 1].lstrip().startswith("#"):
            end = scan
    kept = [line for line in lines[start + 1 : end] if line.lstrip().startswith("#")]
    return "".join(lines[:start] + kept + lines[end:])

"""Reading a user's YAML file (config, plan, offline script) with one kind of error message:
`invalid plan arreio.plan.yaml:7: mapping values are not allowed here` — the file, the line, the problem.

Every YAML document arreio reads is loaded by `yaml_loader`, which bounds it: nested at most
`MAX_DEPTH` levels, and at most `MAX_NODES` nodes with each alias counted as the whole node it names.
Anchors and aliases let a 1 KB file stand for a billion nodes ("billion laughs"): the loader shares
them, but whatever walks the result (validation, a copy into plain dicts) visits each one, for hours.
An alias to a node that contains it (a cycle) is refused too: no walk ever ends on one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from arreio.engine.core.errors import ArreioError
from arreio.engine.core.nesting import MAX_DEPTH, json_loads
from arreio.engine.core.regular_file import read_text

MAX_NODES = 1_000_000


def yaml_loader(typ: Literal["safe", "rt"] = "safe") -> Any:
    """A ruamel `YAML(typ=typ)` whose `load` refuses a document past the bounds above with a
    `YAMLError` (its `problem` says which, its `problem_mark` where). Pure Python always: the C
    parser (ruamel.yaml.clib) composes in C, out of reach of the bounds."""
    from ruamel.yaml import YAML

    yaml = YAML(typ=typ, pure=True)
    yaml.Composer = _bounded_composer()
    yaml.Scanner = _bounded_scanner(yaml.Scanner)  # None for "safe": ruamel's plain Scanner
    return yaml


def _bounded_scanner(base: type | None) -> type:
    from ruamel.yaml.scanner import Scanner, ScannerError

    base = base or Scanner

    class BoundedScanner(base):  # type: ignore[misc, valid-type]
        """Refuses a flow collection (`[`, `{`) opened more than `MAX_DEPTH` deep as it reads it: the
        composer would refuse it too, but only after the scanner had read ahead for every open bracket
        a key that might follow it, each step checking all of them: ~1 s for 50,000 `[` on one line."""

        def fetch_flow_collection_start(self, TokenClass: Any, to_push: Any) -> None:
            if self.flow_level >= MAX_DEPTH:
                raise ScannerError(None, None, f"nested deeper than {MAX_DEPTH} levels", self.reader.get_mark())
            super().fetch_flow_collection_start(TokenClass, to_push)

    return BoundedScanner


def _bounded_composer() -> type:
    from ruamel.yaml.composer import Composer, ComposerError
    from ruamel.yaml.events import AliasEvent

    class BoundedComposer(Composer):
        """Counts while it composes (ruamel composes one node at a time, recursively): the depth,
        and the nodes the document stands for. `_weight[id(node)]` is how many nodes an anchored node
        stands for and `_height` how deep it reaches, known once it is complete; an alias adds those."""

        def __init__(self, loader: Any = None) -> None:
            super().__init__(loader)
            self._level = 0  # depth of the node being composed
            self._nodes = 0  # nodes so far, aliases expanded
            self._weight: dict[int, int] = {}
            self._height: dict[int, int] = {}
            self._reach: list[int] = []  # per open node: the deepest level reached inside it

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.parser.peek_event()
            if isinstance(event, AliasEvent):
                target = self.anchors.get(event.anchor)
                if target is not None:  # an unknown alias is ruamel's own error
                    if id(target) not in self._weight:
                        raise ComposerError(
                            None, None, f"alias *{event.anchor} refers to a node that contains it", event.start_mark
                        )
                    self._count(self._weight[id(target)], self._level + self._height[id(target)], event)
                return super().compose_node(parent, index)
            self._level += 1
            self._count(1, self._level, event)
            before = self._nodes - 1
            self._reach.append(self._level)
            node = super().compose_node(parent, index)
            reach = self._reach.pop()
            if self._reach:
                self._reach[-1] = max(self._reach[-1], reach)
            if getattr(node, "anchor", None) is not None:
                self._weight[id(node)] = self._nodes - before
                self._height[id(node)] = reach - self._level + 1
            self._level -= 1
            return node

        def _count(self, nodes: int, reach: int, event: Any) -> None:
            self._nodes += nodes
            if reach > MAX_DEPTH:
                raise ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
            if self._nodes > MAX_NODES:
                raise ComposerError(None, None, f"more than {MAX_NODES:,} nodes (aliases expanded)", event.start_mark)
            if self._reach:
                self._reach[-1] = max(self._reach[-1], reach)

    return BoundedComposer


def load_yaml(text: str, typ: Literal["safe", "rt"] = "safe") -> Any:
    """`text` as YAML, bounded (`yaml_loader`); ruamel's YAMLError when it is not."""
    return yaml_loader(typ).load(text)


def read_yaml(
    path: Path,
    *,
    error: type[ArreioError],
    what: str,
    shown: str | None = None,
    typ: Literal["safe", "rt"] = "safe",
    limit: int,
) -> Any:
    """The parsed document (None when empty). `what` names the kind of file in messages ("config",
    "plan", "script"); `shown` is how the path is printed (default: as given); `limit` is the most
    bytes read of it (`engine/regular_file.Limit`): a FIFO, a device or a larger file is refused."""
    from ruamel.yaml import YAMLError

    shown = shown or str(path)
    try:
        text = read_text(path, limit=limit)
    except FileNotFoundError:
        raise error(f"{what} file not found: {shown}") from None
    except UnicodeDecodeError:
        raise error(f"invalid {what} {shown}: not UTF-8 text") from None
    except OSError as exc:
        raise error(f"cannot read {what} {shown}: {exc.strerror}") from None
    if typ == "safe" and text.lstrip()[:1] in ("[", "{"):
        # JSON is YAML: read it with the JSON parser, ~100× faster on a long `--script`; anything
        # it refuses goes to the YAML parser, which reads the rest of YAML and reports problems.
        try:
            return json_loads(text)
        except ValueError:
            pass
    try:
        return load_yaml(text, typ)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise error(f"invalid {what} {shown}{where}: {problem}") from None


def line_of(data: Any, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of a location in ruamel's round-trip data, as deep as it can find."""
    line = None
    node = data
    for key in loc:
        lc = getattr(node, "lc", None)
        try:
            if lc is not None:
                if isinstance(key, int):
                    line = lc.item(key)[0] + 1
                else:
                    line = lc.key(key)[0] + 1
            node = node[key]
        except (KeyError, IndexError, TypeError, AttributeError):
            break
    return line


def plain(value: Any) -> Any:
    """ruamel's commented containers → plain dicts/lists (pydantic wants plain data)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def validated(model: Any, data: Any, path: Path, *, error: type[ArreioError]) -> Any:
    """`model.model_validate(data)` for round-trip YAML `data` read from `path`; the first problem is
    one `error` naming the file, the line, the field and what is wrong — an unknown key with the
    key probably meant (`plan.yaml:4: units.0.gaol: unknown key 'gaol' (did you mean 'goal'?)`)."""
    from pydantic import ValidationError

    from arreio.engine.core.config import first_error, suggest_key

    try:
        return model.model_validate(plain(data))
    except ValidationError as exc:
        err = first_error(exc)  # a misspelt key first: it also makes the real key look missing
        loc = tuple(err["loc"])
        line = line_of(data, loc) or line_of(data, loc[:-1])
        field = ".".join(str(p) for p in loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            message = f"unknown key '{loc[-1]}'{suggest_key(loc, model, leaf_only=True)}"
        else:
            message = str(err["msg"]).removeprefix("Value error, ")
        raise error(f"{path}{f':{line}' if line else ''}: {field}: {message}") from None

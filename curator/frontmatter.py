"""YAML frontmatter: the `---` block at the top of a SKILL.md.

Parsing uses ruamel's *safe* loader (no arbitrary tags). Rendering writes a plain block mapping in a
fixed key order so files the agent writes stay diff-friendly.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

FENCE = "---"
KEY_ORDER = ("name", "description", "created_by", "tags", "version")


class FrontmatterError(ValueError):
    """The text has no frontmatter block, or the block is not a YAML mapping."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


def split(text: str) -> tuple[str, str]:
    """Return (yaml_text, body). The block opens on the first line and closes at a `---` line."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != FENCE:
        raise FrontmatterError("no frontmatter: the file must start with a '---' line", code="missing-frontmatter")
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n").rstrip() in (FENCE, "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise FrontmatterError("frontmatter is never closed by a '---' line", code="missing-frontmatter")


def parse(text: str) -> tuple[dict[str, Any], str]:
    """Return (metadata, body). Raises FrontmatterError on a missing block or invalid YAML."""
    from ruamel.yaml.error import YAMLError

    from arreio.engine.core.yaml_file import load_yaml

    raw, body = split(text)
    try:
        data = load_yaml(raw)  # bounded: a billion-laughs or 50,000-deep block is a diagnostic, not a hang
    except YAMLError as error:
        mark = getattr(error, "problem_mark", None)  # ruamel's own text repeats the input; keep what and where
        where = f" at line {mark.line + 2}" if mark is not None else ""  # +1 for 1-based, +1 for the opening ---
        problem = getattr(error, "problem", None) or " ".join(str(error).split())
        raise FrontmatterError(f"invalid YAML in frontmatter{where}: {problem}", code="invalid-yaml") from error
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontmatterError("frontmatter must be a YAML mapping of keys to values", code="invalid-yaml")
    return {str(key): value for key, value in data.items()}, body


def render(meta: Mapping[str, Any], body: str) -> str:
    """Frontmatter plus body. Known keys come first in a fixed order, the rest keep their order."""
    from ruamel.yaml import YAML

    ordered = {key: meta[key] for key in KEY_ORDER if key in meta and meta[key] is not None}
    ordered.update({key: value for key, value in meta.items() if key not in ordered and value is not None})
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.width = 4096  # one description per line; wrapping would make diffs noisy
    yaml.representer.sort_base_mapping_type_on_output = False  # keep KEY_ORDER
    buffer = io.StringIO()
    yaml.dump(ordered, buffer)
    if body and not body.startswith("\n"):
        body = "\n" + body
    return f"{FENCE}\n{buffer.getvalue()}{FENCE}\n{body}"

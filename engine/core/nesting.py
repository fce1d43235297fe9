"""How deep data read from a file may nest: `MAX_DEPTH` levels of lists and mappings.

Python's parsers, and every walk over what they return, recurse once per level: 50,000 `[` in a
session line or a config end in RecursionError, which no reader expects. Nothing arreio writes or
reads nests past a dozen levels, so a document deeper than `MAX_DEPTH` is refused as malformed:
JSON here, YAML while it is composed (`engine/core/yaml_file.py`). What is returned can then be walked
by any code without care.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 100


class TooDeep(json.JSONDecodeError):
    """JSON nested deeper than `MAX_DEPTH`: malformed, as far as arreio is concerned."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_DEPTH} levels", "", 0)

    def __str__(self) -> str:  # no "line 1 column 1 (char 0)": where it got too deep is not known
        return self.msg


def depth(value: Any, bound: int = MAX_DEPTH) -> int:
    """How many levels of lists and dicts `value` nests (0 for a scalar), counted level by level
    without recursion; the count stops once it passes `bound`."""
    level, current = 0, [value] if type(value) in (dict, list) else []
    while current and level <= bound:
        level += 1
        deeper = []
        for node in current:
            for child in node.values() if type(node) is dict else node:
                if type(child) is dict or type(child) is list:
                    deeper.append(child)
        current = deeper
    return level


def json_loads(data: str | bytes | bytearray) -> Any:
    """`json.loads(data)`, but a document nested deeper than `MAX_DEPTH` is a `json.JSONDecodeError`
    (a ValueError) like any other malformed text, never a RecursionError. The C parser gives up on
    its own past ~1,000 levels; below that, what it made is measured — only when the text has more
    opening brackets than the bound in all (two C-speed counts), which almost no line has."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise TooDeep from None
    opens = data.count("[") + data.count("{") if isinstance(data, str) else data.count(b"[") + data.count(b"{")
    if opens > MAX_DEPTH and depth(value) > MAX_DEPTH:
        raise TooDeep
    return value

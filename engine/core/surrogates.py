"""Lone surrogates: text Python can hold and UTF-8 cannot write.

They come from two places. A file name on Linux may be any bytes, and Python keeps each byte that is
not UTF-8 as U+DC80–U+DCFF (PEP 383), so a directory listing can hold one; a JSON string from a
model's stream may carry an escaped half of a surrogate pair (`"\\ud83d"`), or both halves in two
chunks. Every writer (the session line, the events file, the audit journal) encodes UTF-8 and
failed on them: the run died with "internal error". The tool chain and the model call
hand on only text that is UTF-8; the fast path is one `encode`, no copy.
"""

from __future__ import annotations

import re
from typing import Any

_LONE = re.compile("[\ud800-\udfff]")


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escaped(text: str) -> str:
    """A tool's output as text: `text` itself when it is UTF-8; else each lone surrogate written
    out — `\\xff` for a byte that was not UTF-8 (so a file name reads as its bytes), `\\udXXX`
    for any other."""
    return text if _is_utf8(text) else _LONE.sub(_written_out, text)


def _written_out(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def repaired(text: str) -> str:
    """A model's text as text: `text` itself when it is UTF-8; else the two halves of a pair that
    came apart joined into their character, and a lone half replaced by U+FFFD."""
    if _is_utf8(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def repaired_value(value: Any) -> Any:
    """`repaired` on every string of a JSON value (a tool call's arguments), keys included; the
    value itself when nothing needed it."""
    if isinstance(value, str):
        return repaired(value)
    if isinstance(value, dict):
        items = {repaired(k): repaired_value(v) for k, v in value.items()}
        return value if all(k in value and items[k] is value[k] for k in items) else items
    if isinstance(value, list):
        items = [repaired_value(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value

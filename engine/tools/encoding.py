"""Which text encoding a file is in, so tools never hand the model U+FFFD garbage without a word.

`sniff(head)` looks at a file's first bytes: a byte-order mark decides (UTF-8, UTF-16, UTF-32); a NUL
byte without one means binary (how git and grep decide); valid UTF-8 is UTF-8; an encoding the file
declares (a PEP 263 `coding:` line, an XML or HTML charset) is taken when Python knows it; else
cp1252 when every byte is defined there (the common Windows case), else latin-1, which decodes any
byte. Anything but UTF-8 is reported back (`Encoding.note`), so the model knows what was assumed.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

SNIFF_BYTES = 8192
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_DECLARED = (
    re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE),  # PEP 263, first two lines
    re.compile(rb"<\?xml[^>]*encoding=[\"']([-\w.]+)[\"']", re.IGNORECASE),
    re.compile(rb"<meta[^>]*charset=[\"']?([-\w.]+)", re.IGNORECASE),
)
_CP1252_UNDEFINED = frozenset(b"\x81\x8d\x8f\x90\x9d")


@dataclass(frozen=True)
class Encoding:
    """How to decode a file: `name` for `open(encoding=…)`, `why` when it is not plain UTF-8."""

    name: str
    why: str = ""

    def note(self, shown: str) -> str:
        """A line for the model when the text was not plain UTF-8 (empty otherwise)."""
        return f"[{shown} is not UTF-8: {self.why}; decoded as {self.name}]" if self.why else ""


def sniff(head: bytes) -> Encoding | None:
    """The encoding of a file starting with `head` (its first SNIFF_BYTES), or None for binary."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return Encoding(name) if name == "utf-8-sig" else Encoding(name, "it starts with a byte-order mark")
    if b"\0" in head:
        return None
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)  # a cut last character is fine
        return Encoding("utf-8")
    except UnicodeDecodeError:
        pass
    declared = _declared(head)
    if declared is not None:
        return Encoding(declared, "the file declares it")
    if not _CP1252_UNDEFINED.intersection(head):
        return Encoding("cp1252", "no valid UTF-8; assumed Windows-1252")
    return Encoding("latin-1", "no valid UTF-8 or Windows-1252; assumed latin-1")


def _declared(head: bytes) -> str | None:
    first_lines = b"\n".join(head.splitlines()[:2])
    for pattern, text in zip(_DECLARED, (first_lines, head, head), strict=True):
        match = pattern.search(text)
        if match:
            try:
                return codecs.lookup(match.group(1).decode("ascii")).name
            except (LookupError, UnicodeDecodeError):
                return None
    return None

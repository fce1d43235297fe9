"""The other spellings of a known secret. A value the redactor hides as written is also hidden when it
shows reversed, in base64 (standard and URL-safe, padded or not, at each of the three byte offsets it
can sit at inside a longer base64 stream: `user:<password>` in a docker `auth`), in hex (lower and
upper case), percent-encoded, or broken by what separates two pieces of one printed value: blanks,
line breaks, quotes, a `+` between quotes, the line numbers `read_file` and `cat -n` put in front of
each line, and the JSON escapes of all of these (`echo ${KEY:0:20}; echo ${KEY:20}`, base64 wrapped
at 64 or 76 columns, `"sk-…" + "…"`). A multi-line value (a private key) is also hidden line by line,
so a sorted `env` that scatters its lines among the others still hides each one.

Every spelling is made once per run (`Spellings`), with two anchors: its first four characters and
the four after them. A text is searched for the anchors with `str.find` (~0.6 ns a character each);
only where one is found is the text around it squeezed (the separators taken out, `squeeze`) and
compared with the spellings anchored there. A spelling is random-looking and at least
`MIN_SECRET_CHARS` long, so it does not occur by chance in ordinary text (invariant 9 in docs/architecture.md). What
is not found: a value broken within its first four characters and again within the next four, or
cut into pieces shorter than an anchor; a spelling of a spelling (base64 of hex, percent-encoding
twice); encodings other than these (base32, ROT13, backslash-x escapes, hex with `:` between bytes).
"""

from __future__ import annotations

import base64
import bisect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

from arreio.engine.walls.secret_env import MIN_SECRET_CHARS

__all__ = ["Spellings", "lines", "spellings", "squeeze"]

ANCHOR = 4
# One thing that can stand between two pieces of a printed value: a line break (raw or JSON-escaped)
# with the line number that follows it, a blank, a quote, a JSON escape, a `+` between quotes or blanks.
_BREAK = re.compile(r"(?:\r?\n|\\+n)(?:[ \t]*[0-9]{1,7}(?:\t|\\+t))?|[\s\"'`]|\\+[nrt\"'`]|(?<=[\s\"'`])\+(?=[\s\"'`])")
# A line of a multi-line value hidden on its own: a run of token characters with a digit and both
# cases (a key's base64 line), never a line of words or punctuation that other texts share.
_RANDOM_LINE = re.compile(r"(?=[^\n]*[0-9])(?=[^\n]*[a-z])(?=[^\n]*[A-Z])[A-Za-z0-9+/=_\-.]{16,}")
# An anchor with two letters or digits: not `----` (a private key as written, found by its lines
# here and whole by the redactor's pattern), which every Markdown rule would send to a squeeze.
_ANCHORED = re.compile(r"(?=.{0,3}[A-Za-z0-9].{0,2}[A-Za-z0-9])", re.DOTALL)
# How far past an anchor a broken spelling may reach: every character of it followed by a break.
_REACH, _REACH_EXTRA = 8, 256
_BACK = ANCHOR * 16  # how far before a second anchor its spelling may start: four characters and their breaks


def _base64(data: bytes) -> list[str]:
    """The base64 spellings of `data`: for each byte offset `k` it can sit at in a longer stream, the
    characters that depend on `data` alone, and the whole end of a stream `data` closes (its last,
    partial character and the padding, or none); in both alphabets."""
    out = []
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for k in range(3):
            text = encode(b"\0" * k + data).decode("ascii")
            start, end = (8 * k + 5) // 6, 8 * (k + len(data)) // 6
            out += [text[start:end], text[start:], text[start:].rstrip("=")]
    return out


def lines(value: str) -> list[str]:
    """The random-looking lines of a multi-line value (a private key's base64 lines)."""
    if "\n" not in value:
        return []
    return [m.group(0) for line in value.splitlines() if (m := _RANDOM_LINE.fullmatch(line.strip()))]


def spellings(value: str) -> list[str]:
    """Every spelling of `value` but itself as written and its lines: reversed, base64, hex,
    percent-encoded; plus the JSON-escaped forms of the reversed one."""
    data = value.encode("utf-8")
    reverse = value[::-1]
    forms = [reverse, json.dumps(reverse)[1:-1], json.dumps(reverse, ensure_ascii=False)[1:-1]]
    forms += _base64(data)
    forms += [data.hex(), data.hex().upper()]
    for encoded in (quote(value, safe=""), quote(value), quote_plus(value)):
        forms += [encoded, re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)]
    return [form for form in dict.fromkeys(forms) if form != value]


def squeeze(text: str) -> tuple[str, list[int], list[int]]:
    """`text` with every break taken out, and where each kept run starts: in the squeezed text and in
    `text` (two sorted lists, for `original`)."""
    kept, at_squeezed, at_text = [], [], []
    pos = done = 0
    for found in _BREAK.finditer(text):
        if found.start() > pos:
            kept.append(text[pos : found.start()])
            at_squeezed.append(done)
            at_text.append(pos)
            done += found.start() - pos
        pos = found.end()
    if pos < len(text):
        kept.append(text[pos:])
        at_squeezed.append(done)
        at_text.append(pos)
    return "".join(kept), at_squeezed, at_text


def original(at_squeezed: list[int], at_text: list[int], index: int) -> int:
    """Where the character at `index` of a squeezed text is in the text it was squeezed from."""
    run = bisect.bisect_right(at_squeezed, index) - 1
    return at_text[run] + index - at_squeezed[run]


@dataclass(frozen=True)
class Span:
    """A spelling found: where it is in the text, the variable it belongs to, and whether the text
    ended before it did (`partial`: the start of one, still arriving)."""

    start: int
    end: int
    name: str
    partial: bool = False


class Spellings:
    """Every spelling of a run's secrets (`secrets` maps a variable's name to its value), grouped by
    anchor: the value itself too (as written, and JSON-escaped), which the redactor's pattern finds
    whole and this finds broken. Each spelling has two anchors, its first four characters and the
    four after them, so a break among the first four (base64 wrapped one character into it) is found
    by the second."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        anchors: dict[str, dict[tuple[str, int], str]] = {}
        for name, value in sorted(secrets.items()):
            once = [json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]]
            forms = [
                (form, (0, ANCHOR)) for form in (value, *once, *(json.dumps(f)[1:-1] for f in once), *spellings(value))
            ]
            # A line shows whole (a sorted `env`): its first anchor is enough.
            for form, offsets in forms + [(line, (0,)) for line in lines(value)]:
                flat = squeeze(form)[0]
                if len(flat) < MIN_SECRET_CHARS:
                    continue
                for offset in offsets:
                    anchor = flat[offset : offset + ANCHOR]
                    if len(anchor) == ANCHOR and _ANCHORED.match(anchor):
                        anchors.setdefault(anchor, {}).setdefault((flat, offset), name)
        # Longest first: of two spellings starting alike (a base64 core and the padded stream end
        # that holds it), the longer is hidden whole.
        self._anchors = {
            a: sorted(((form, offset, name) for (form, offset), name in forms.items()), key=lambda f: -len(f[0]))
            for a, forms in anchors.items()
        }
        self.anchors = tuple(self._anchors)

    def __bool__(self) -> bool:
        return bool(self._anchors)

    def _at(self, text: str, at: int, forms: list[tuple[str, int, str]], partial: bool) -> Span | None:
        """The longest spelling whose anchor is at `at`; with `partial`, first one that the text's end
        leaves unfinished (the rest may still arrive)."""
        low = max(0, at - _BACK)
        high = at + len(forms[0][0]) * _REACH + _REACH_EXTRA
        flat, at_squeezed, at_text = squeeze(text[low:high])
        run = bisect.bisect_right(at_text, at - low) - 1  # the kept run the anchor starts in
        anchored = at_squeezed[run] + at - low - at_text[run]  # where it is in the squeezed window
        if partial and high >= len(text):
            for form, offset, name in forms:
                begin = anchored - offset
                rest = flat[begin:] if begin >= 0 else ""
                if len(form) > len(rest) >= ANCHOR + offset and form.startswith(rest):
                    return Span(low + original(at_squeezed, at_text, begin), len(text), name, partial=True)
        for form, offset, name in forms:
            begin = anchored - offset
            if begin >= 0 and flat.startswith(form, begin):
                start = low + original(at_squeezed, at_text, begin)
                return Span(start, low + original(at_squeezed, at_text, begin + len(form) - 1) + 1, name)
        return None

    def spans(self, text: str, *, partial: bool = False) -> list[Span]:
        """The spellings in `text`, in order, none overlapping another (the earlier, then the longer,
        wins); with `partial` also one the text's end cuts short."""
        found: list[Span] = []
        for anchor, forms in self._anchors.items():
            at = text.find(anchor)
            while at >= 0:
                span = self._at(text, at, forms, partial)
                if span is not None:
                    found.append(span)
                at = text.find(anchor, at + 1)
        if len(found) < 2:
            return found
        found.sort(key=lambda s: (s.start, -s.end))
        kept = [found[0]]
        for span in found[1:]:
            if span.start >= kept[-1].end:
                kept.append(span)
        return kept

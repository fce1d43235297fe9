"""A final answer as prose the claim reader can walk: lines, clauses, tokens (used by `claims.py`).

What is not the speaker's own prose is removed before anything is read, because a path in it is
never a claim: fenced code blocks, blockquotes, text in double quotes (a quoted goal or instruction),
tables, URLs, and every line under a heading or list head that names sources, inputs, next steps or
anything in doubt. Wrapped lines are joined back into one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# A doubled "/" between names (`.//.arreio/x`) is one separator, as the file system reads it; at the
# start only after dots, so the "//" of a URL's scheme never begins a path.
_FILE = re.compile(r"(?<![\w/.-])((?:\.{1,2}/+|/)?\.?[\w][\w.-]*(?:/+[\w.-]+)*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/-])")
_SLASHES = re.compile(r"/{2,}")
_TICKED = re.compile(r"`([^`\n]+)`")
_DOUBLE_QUOTED = re.compile('"([^"\n]+)"|\u201c([^\u201d\n]+)\u201d')
_NOT_FILES = {"e.g", "i.e", "etc", "vs"}
# Bare names that look like files but are products ("Created a Next.js app").
_PRODUCTS = {
    "node.js",
    "next.js",
    "nuxt.js",
    "vue.js",
    "react.js",
    "express.js",
    "three.js",
    "d3.js",
    "chart.js",
    "socket.io",
    "angular.js",
    "ember.js",
    "backbone.js",
    "p5.js",
    "alpine.js",
    "nest.js",
    "asp.net",
    "ado.net",
    "vb.net",
    "math.js",
    "moment.js",
    "day.js",
    "solid.js",
    "preact.js",
    "deno.land",
    "bun.sh",
}


def _path_spans(text: str, quoted: bool = False) -> list[tuple[int, int, int, int, str]]:
    """(start, end) of the path's own text, (start, end) of its span (with backticks), and the path,
    for every path in `text`. `quoted`: a double-quoted name with a space ("my notes.md") is a path
    too — for the goal reader only: in an answer, a quoted commit message ("Update README.md") would
    become a claim the promise gate checks (a false alarm costs more than a miss)."""
    found: list[tuple[int, int, int, int, str]] = []
    for m in _TICKED.finditer(text):
        inner = m.group(1).strip()
        if _FILE.fullmatch(inner.replace(" ", "_")):
            at = m.start(1) + m.group(1).index(inner)
            found.append((at, at + len(inner), m.start(0), m.end(0), inner))
    blanked = _TICKED.sub(lambda m: " " * len(m.group(0)), text)  # keep offsets
    for m in _DOUBLE_QUOTED.finditer(blanked) if quoted else ():
        raw = m.group(1) if m.group(1) is not None else m.group(2)
        inner = raw.strip()
        if " " in inner and _FILE.fullmatch(inner.replace(" ", "_")):
            at = m.start(0) + 1 + raw.index(inner)
            found.append((at, at + len(inner), m.start(0), m.end(0), inner))
            blanked = blanked[: m.start(0)] + " " * (m.end(0) - m.start(0)) + blanked[m.end(0) :]
    found += [(m.start(1), m.end(1), m.start(1), m.end(1), m.group(1)) for m in _FILE.finditer(blanked)]
    out = [(at, end, s, e, _SLASHES.sub("/", p).removeprefix("./")) for at, end, s, e, p in sorted(found)]
    return [span for span in out if span[-1].lower() not in _NOT_FILES]


def paths_in(text: str) -> list[tuple[int, str]]:
    """File paths named in `text`, with where each starts, in order. A backticked path may hold spaces
    (`notes/my file.md`); a bare one ends at whitespace. `./a.md` is given as `a.md`, `a//b.md` as
    `a/b.md`."""
    return [(at, path) for at, _, _, _, path in _path_spans(text)]


def path_mentions(text: str, *, quoted: bool = False) -> list[tuple[int, int, str]]:
    """As `paths_in`, with where each path's own text ends (it may be longer than the path given:
    `./a.md`, `a//b.md`); `quoted`: see `_path_spans`."""
    return [(at, end, path) for at, end, _, _, path in _path_spans(text, quoted)]


@dataclass(frozen=True)
class Token:
    """One word (lower case), punctuation mark, path or other backticked text of a clause."""

    word: str = ""
    punct: str = ""
    path: str = ""
    code: str = ""


_WORDS = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]|\d+|[,:;()&/+—–-]|\S")


def tokens(text: str) -> list[Token]:
    text = text.replace("’", "'")
    out: list[Token] = []
    at = 0
    spans = [(s, e, p) for _, _, s, e, p in _path_spans(text)]
    spans += [
        (m.start(), m.end(), "") for m in _TICKED.finditer(text) if not any(s <= m.start() < e for s, e, _ in spans)
    ]
    for start, end, path in sorted(spans):
        if start < at:
            continue
        out += _plain(text[at:start])
        if path.lower() in _PRODUCTS:  # a word, not a path: "Created a Next.js app in app/page.tsx"
            out.append(Token(word=path.lower()))
        elif path:
            out.append(Token(path=path))
        else:
            out.append(Token(code=text[start + 1 : end - 1].strip()))
        at = end
    return out + _plain(text[at:])


def _plain(segment: str) -> list[Token]:
    out = []
    for m in _WORDS.finditer(segment):
        piece = m.group(0)
        if piece[0].isascii() and (piece[0].isalpha() or piece.isdigit()):
            out.append(Token(word=piece.lower()))
        elif piece in ",:;()&/+—–-":
            out.append(Token(punct=piece))
        else:
            out.append(Token())
    return out


def blank_code(text: str) -> str:
    """`text` with backticked spans and paths blanked, so words inside them (`pytest -k "not slow"`,
    no-op.md) are never read as the speaker's."""
    chars = list(_TICKED.sub(lambda m: " " * len(m.group(0)), text))
    for _, _, start, end, _path in _path_spans(text):
        chars[start:end] = " " * (end - start)
    return "".join(chars)


_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|[;；]")
_CONTRAST = re.compile(r",?\s+\b(?:but|however|although|though|whereas|while)\b[\s,]*", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s and s.strip()]


def clauses(text: str) -> list[str]:
    """Sentences, cut again where a contrast starts ("I did not create a.md, but I wrote b.md")."""
    return [c for s in sentences(text) for c in _CONTRAST.split(s) if c.strip()]


@dataclass(frozen=True)
class Line:
    text: str
    bullet: bool
    head: str | None  # the bearing of the heading or list head it sits under ("write" | None)


_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_URL = re.compile(r"https?://\S+|www\.\S+")
_QUOTED = re.compile(r"(`[^`\n]+`)|\"[^\"\n]*\"|“[^”\n]*”|„[^“”\n]*[“”]|«[^»\n]*»|「[^」\n]*」|『[^』\n]*』")
_BOLD = re.compile(r"(`[^`\n]+`)|\*\*")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_SYMBOLS = re.compile(r"^[^\w`./(\[~]+")
_HEADING = re.compile(r"^\s*#{1,6}\s+(.*)$")
_BOLD_HEAD = re.compile(r"^\s*\*\*([^*`]+?):?\*\*:?\s*$")  # "**Files written**" alone on its line


def fenced(text: str) -> str:
    """The text of the answer's fenced code blocks, joined: what it shows, not what it says."""
    return "\n".join(m.group(0) for m in _FENCE.finditer(text.replace("\r\n", "\n")))


def lines(text: str, bearing: Callable[[str], str | None]) -> list[Line]:
    """The answer's prose lines, each with its bullet flag and the bearing of its section; `bearing`
    judges a heading or list head ("write" | "skip" | None) and "skip" drops the lines under it."""
    text = _FENCE.sub("\n", text.replace("\r\n", "\n"))
    text = _URL.sub(" ", text)
    text = _QUOTED.sub(lambda m: m.group(1) or " ", text)
    out: list[Line] = []
    mode: str | None = None
    list_head, seen_item, joinable = False, False, False
    for raw in text.split("\n"):
        raw_line = _BOLD.sub(lambda m: m.group(1) or "", raw)
        stripped = raw_line.strip()
        if not stripped:
            if list_head and seen_item:
                mode, list_head = None, False
            joinable = False
            continue
        if stripped.startswith((">", "|")):
            continue  # a quote or a table row: not the speaker's sentence
        heading = _HEADING.match(raw_line) or _BOLD_HEAD.match(raw)
        bullet = _BULLET.match(raw_line) is not None
        body = _SYMBOLS.sub("", _BULLET.sub("", raw_line)).strip()
        if heading or (body.endswith(":") and not paths_in(body)):
            mode = bearing(heading.group(1) if heading else body)
            list_head, seen_item, joinable = not heading, False, False
            continue
        if list_head and not bullet and seen_item:
            mode, list_head = None, False
        seen_item = seen_item or bullet
        if mode == "skip":
            joinable = False
            continue
        if (
            joinable
            and not bullet
            and out[-1].text[-1:] not in ".!?:;。！？"
            and (body[:1].islower() or body[:1] == "`")
        ):
            out[-1] = Line(f"{out[-1].text} {body}", out[-1].bullet, out[-1].head)  # a wrapped line
            continue
        out.append(Line(body, bullet, mode))
        joinable = True
    return out

"""Untrusted text made inert for a terminal.

File contents, command output and model text reach the live view and plain output. A control or
escape sequence in them would act on the user's terminal — clear it, retitle it, move the cursor to
overwrite what was shown, hide text behind a bidi override. Here they are shown escaped instead:
`\\x1b[2J` reads as those characters. Newlines and tabs stay; a lone carriage return is shown. Text
that must stay on its line (a file name in a result line) has its newlines and tabs shown too. A
message given a line of its own (a run's error on stderr, a retry, a warning, a batch row) is `flat`:
its whitespace runs become one space, so a server's error text cannot start a line that looks like
arreio's. `--json` output is data and is never changed.
"""

from __future__ import annotations

import re

from rich.markup import escape as escape_markup

# C0 controls but tab and newline, DEL, C1 controls, and the bidi embeddings/overrides/isolates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKING = re.compile("[\t\n]")  # the two `_CONTROL` lets through


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str, *, one_line: bool = False) -> str:
    """`text` with every control and escape sequence shown, not acted on (CRLF line ends stay).
    `one_line`: newlines and tabs are shown too (`\\x0a`), so a file name cannot fake a line."""
    if one_line:
        return _LINE_BREAKING.sub(_escaped, _CONTROL.sub(_escaped, text))
    return _CONTROL.sub(_escaped, text.replace("\r\n", "\n"))


def flat(text: str) -> str:
    """Inert, on one line: every run of whitespace (a newline, a tab, spaces) is one space."""
    return " ".join(inert(text).split())


def shown(text: str, *, one_line: bool = False) -> str:
    """Inert, and safe to embed in rich markup."""
    return escape_markup(inert(text, one_line=one_line))


GUTTER = "  │ "


def call_text(summary: str, *, markup: bool = False) -> str:
    """A call as a person deciding on it reads it: all of it, inert (`markup`: also safe in rich
    markup). A call of several lines starts on a line of its own and each of its lines sits behind a
    gutter, so no line of it can pass for one of arreio's (`⏸ …`, `Run it?`)."""
    make = shown if markup else inert
    lines = summary.split("\n")
    if len(lines) == 1:
        return make(summary)
    return "\n" + "\n".join(GUTTER + make(line) for line in lines)

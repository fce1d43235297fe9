"""`@path` mentions: a message that names a file with `@` gets that file's text attached, bounded, as
context for that message only (the model sees it in the message; nothing is read by a tool).

    Explain @src/app.py please   →   Explain @src/app.py please

                                     [arreio: attached by the user as context for the message above]
                                     ~~~ src/app.py (1,204 bytes)
                                     …the file's text…
                                     ~~~

A mention is a word starting with `@` (so `me@example.com` is not one); a trailing `.,;:!?)` is not
part of the path when the path without it names a file. A name with spaces is quoted, `@"my notes.md"`
(what Tab completes), or written with `\\ ` as a shell does (`@my\\ notes.md`, what a terminal pastes
for a dropped file). A name that is no file is sent as written, and said (a folder too: the agent can
look in it, nothing is attached); a file over MENTION_CAP is cut (on a line end when one is near) and the
cut is said, to the user and to the model; a binary file is not attached."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from arreio.engine.core.prompt import ATTACHED
from arreio.engine.core.regular_file import open_regular, read_to_end

MENTION_CAP = 50 * 1024  # bytes of one file's text attached
_MENTION = re.compile(r'(?<!\S)@(?:"([^"\n]+)"|((?:\\ |\S)+))')
_TRAILING = ".,;:!?)"


@dataclass
class Mentions:
    text: str  # the message with the attachments below it
    attached: list[str] = field(default_factory=list)  # the paths attached, as written
    notes: list[str] = field(default_factory=list)  # what the user should know (not found, cut, binary)


def _candidates(word: str) -> list[str]:
    candidates = [word]
    stripped = word
    while stripped and stripped[-1] in _TRAILING:
        stripped = stripped[:-1]
        candidates.append(stripped)
    return candidates


def _is_dir(name: str, cwd: Path) -> bool:
    try:
        return (cwd / Path(name).expanduser()).is_dir()
    except (OSError, RuntimeError, ValueError):
        return False


def _resolve(word: str, cwd: Path, *, quoted: bool = False) -> tuple[str, Path] | None:
    for name in [word] if quoted else _candidates(word):
        if not name:
            continue
        try:
            path = (cwd / Path(name).expanduser()).resolve()  # an absolute path stays itself
            if path.is_file():
                return name, path
        except (OSError, RuntimeError, ValueError):  # `@~nobody/x`, a name too long for the system, a NUL
            continue
    return None


def _size(n: int) -> str:
    return f"{n:,} bytes"


def expand(message: str, cwd: Path, *, cap: int = MENTION_CAP) -> Mentions:
    """The message with each mentioned file's text attached below it (each file once)."""
    out = Mentions(message)
    blocks: list[str] = []
    for match in _MENTION.finditer(message):
        quoted = match.group(1) is not None
        word = match.group(1) if quoted else match.group(2).replace("\\ ", " ")
        found = _resolve(word, cwd, quoted=quoted)
        if found is None:
            shown = match.group(0)
            if any(_is_dir(name, cwd) for name in ([word] if quoted else _candidates(word))):
                out.notes.append(f"{shown}: a folder; nothing attached, sent as written (the agent can look in it)")
            elif quoted or "/" in word or "." in word.rstrip(_TRAILING):  # looks like a path (`@alice` is a name)
                out.notes.append(f"{shown}: no such file here, sent as written")
            continue
        name, path = found
        if name in out.attached:
            continue
        try:  # at most what is attached: a mentioned 10 GB log is not read whole, a pipe not waited on
            fd, info = open_regular(path)
            size = info.st_size
            try:
                data = read_to_end(fd, size, cap + 1)
            finally:
                os.close(fd)
        except OSError as error:
            out.notes.append(f"@{name}: cannot read it ({error.strerror or error}); not attached")
            continue
        if b"\x00" in data[:8192]:
            out.notes.append(f"@{name}: a binary file; not attached")
            continue
        note = ""
        if len(data) > cap:
            head = data[:cap]
            newline = head.rfind(b"\n")
            head = head[: newline + 1] if newline > cap // 2 else head
            whole = _size(max(size, len(data)))
            note = f"[arreio: {name} is {whole}; only its first {_size(len(head))} is above, the rest was cut]\n"
            out.notes.append(f"@{name}: cut to its first {_size(len(head))} (it is {whole})")
            data = head
        text = data.decode("utf-8", errors="replace")
        longest = max((len(line) - len(line.lstrip("~")) for line in text.splitlines()), default=0)
        fence = "~" * max(3, longest + 1)
        body = text if text.endswith("\n") else text + "\n"
        blocks.append(f"{fence} {name} ({_size(len(data))})\n{body}{fence}\n{note}")
        out.attached.append(name)
    if blocks:
        out.text = message.rstrip() + ATTACHED + "\n".join(blocks)
    return out


def as_typed(sent: str) -> str:
    """A sent message as the person typed it: without the files attached below it, or a note for the
    model above it (`[arreio: …]` and a blank line: cli/chat/loop.py's `note`)."""
    typed = sent.split(ATTACHED, 1)[0]
    if typed.startswith("[arreio: ") and "]\n\n" in typed:
        typed = typed.split("]\n\n", 1)[1]
    return typed

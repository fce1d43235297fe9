"""A big paste in a sent message, as the chat shows it: `› look at this: [pasted 40 lines] thanks`.

A paste is taken whole (bracketed paste, cli/chat/input.py) and shown whole while the message is
edited; once sent, the prompt's echo of it stayed on the screen too — forty lines of a log between
one question and its answer, for every message that carried one. So when a message holds a big paste,
prompt_toolkit erases its echo on Enter and the chat prints it again with each big paste collapsed to
a label. The message sent (and the history's Up-arrow) keep the whole text."""

from __future__ import annotations

MIN_LINES = 10  # a paste this many lines long is collapsed …
MIN_CHARS = 1000  # … and so is one this long (a single long line)


def normalised(data: str) -> str:
    """A paste's text as it enters the message: `\\n` line endings (some terminals paste `\\r\\n`)."""
    return data.replace("\r\n", "\n").replace("\r", "\n")


def label(block: str) -> str | None:
    """`[pasted 40 lines]` (or `[pasted 1,234 chars]`) for a big paste; None for a small one."""
    lines = block.count("\n") + (0 if block.endswith("\n") else 1)
    if lines >= MIN_LINES:
        return f"[pasted {lines} lines]"
    if len(block) >= MIN_CHARS:
        return f"[pasted {len(block):,} chars]"
    return None


def collapsed(text: str, pastes: list[str]) -> str | None:
    """`text` with each big paste of `pastes` (in the order pasted) collapsed to its label; None when
    there is none to collapse. A paste edited since is no longer found as it was: it is left as it is."""
    shown, start, changed = text, 0, False
    for block in pastes:
        name = label(block)
        at = shown.find(block, start) if name is not None else -1
        if name is None or at < 0:
            continue
        shown = shown[:at] + name + shown[at + len(block) :]
        start, changed = at + len(name), True
    return shown if changed else None

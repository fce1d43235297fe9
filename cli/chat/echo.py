"""The terminal's echo of typed keys, off while a chat turn runs.

Rich draws the answer's live preview as lines padded to the terminal's width. The terminal's own echo
of a key typed meanwhile — `^C` for Ctrl-C, or a message typed ahead — lands after such a line, wraps,
and moves the cursor down one: rich then erased the wrong line and a cancelled answer showed twice (a
user trial). With echo off nothing is drawn behind rich's back; Ctrl-C still interrupts (the line
discipline's signals stay on) and keys typed ahead wait in the terminal's queue for the next prompt.
An inline approval reads a typed line, so it turns the echo and line editing back on while it asks
(`echoed`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from arreio.cli.interrupts import wait_for_input


def tty_fd(stream: Any) -> int | None:
    """The file descriptor of `stream` when it is a terminal, else None."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a test's in-memory stream
        return None
    return fd if os.isatty(fd) else None


@contextmanager
def _echo(stream: Any, on: bool) -> Iterator[None]:
    fd = tty_fd(stream)
    if fd is None:
        yield
        return
    import termios

    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        yield
        return
    # A question read as a line gets the line editing back too (typeahead.py turns it off in a turn).
    flags = termios.ECHO | termios.ECHOCTL | (termios.ICANON if on else 0)
    changed = list(saved)
    changed[3] = saved[3] | flags if on else saved[3] & ~flags
    if changed[3] == saved[3]:
        yield
        return
    termios.tcsetattr(fd, termios.TCSANOW, changed)  # TCSANOW: keys typed ahead stay queued
    try:
        yield
    finally:
        try:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
        except termios.error:
            pass  # the terminal went away meanwhile


def unechoed(stream: Any) -> Any:
    """Keys typed on `stream` (a terminal; anything else is left alone) are not echoed inside."""
    return _echo(stream, on=False)


def echoed(stream: Any) -> Any:
    """Keys typed on `stream` are echoed and line-edited inside (a question read as a line), whatever
    was set around it."""
    return _echo(stream, on=True)


# What a key at the approval question may be the start of: the rest, typed straight after, is taken
# with it (a person used to typing "yes⏎" meant one answer).
_WORDS = {"y": "yes", "n": "no", "a": "always", "e": "explain"}
_FOLLOW_S = 0.3  # how long after a key the next one still counts as the same word


def read_key(fd: int) -> str:
    """One key from the terminal `fd`, without waiting for Enter: "y", "n", "a", "e", another
    character, "" for Enter, "\x04" for Ctrl-D. The line discipline's signals stay on (Ctrl-C still
    interrupts). The rest of the key's word and an Enter typed straight after it are consumed; any
    other keys typed in that moment are dropped with them (they belonged to the answer)."""
    import select
    import termios

    saved = termios.tcgetattr(fd)
    raw = list(saved)
    raw[3] = saved[3] & ~(termios.ICANON | termios.ECHO | termios.ECHOCTL)
    raw[6] = list(saved[6])
    raw[6][termios.VMIN], raw[6][termios.VTIME] = 1, 0
    termios.tcsetattr(fd, termios.TCSANOW, raw)
    try:
        wait_for_input(fd)  # inside an approval's question: a signal to another thread ends it too
        first = os.read(fd, 1).decode("utf-8", errors="replace")
        if first in ("\r", "\n"):
            return ""
        word = _WORDS.get(first.lower(), "")[1:]
        # after an unknown key only an Enter already typed goes with it: the next key is the next answer
        follow = _FOLLOW_S if first.lower() in _WORDS else 0
        while select.select([fd], [], [], follow)[0]:
            got = os.read(fd, 1).decode("utf-8", errors="replace").lower()
            if got in ("\r", "\n"):  # the Enter after the answer
                break
            if word and got == word[0]:
                word = word[1:]
                continue
            termios.tcflush(fd, termios.TCIFLUSH)  # not the answer's word: what else came with it goes too
            break
        return first
    finally:
        try:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
        except termios.error:
            pass  # the terminal went away meanwhile

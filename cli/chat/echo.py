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

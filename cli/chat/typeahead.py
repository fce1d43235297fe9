"""Keys typed while a chat turn runs: Esc stops the turn; everything else waits for the next prompt.

People who use Claude Code or Codex press Esc to stop the agent. With the terminal line-buffered (as
it was), an Esc did nothing during the turn and then waited in the terminal's queue, where the next
prompt read it as the first half of Alt-<key>: the person's first keystroke vanished. Now the turn
reads the terminal unbuffered (canonical mode off; Ctrl-C still signals) and keeps what it reads:

- an Esc on its own — nothing follows it within ESC_ALONE_S, which an arrow key's or Alt-<key>'s
  sequence always does (a terminal writes a sequence at once) — cancels the turn, as Ctrl-C does;
- any other key is kept, in order, and `TypeAhead.text` hands it to the next prompt, which replays it
  as if typed there: a message typed ahead with Enter is sent when the turn ends, as before; a paste
  (bracketed, as at the prompt) lands there whole, its newlines never sending.

An inline approval reads its answer as a line (echo.py's `echoed` turns canonical mode back on while
it asks), so a key typed before the question never answers it.
"""

from __future__ import annotations

import asyncio
import codecs
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from arreio.cli.chat.echo import tty_fd

ESC = 0x1B
# Bracketed paste on while the turn runs: a paste comes wrapped, is kept whole and lands in the next
# prompt as one paste (its lines were typed Enters: each went out as a message of its own).
PASTE_ON, PASTE_OFF = b"\x1b[?2004h", b"\x1b[?2004l"
ESC_ALONE_S = 0.05  # a terminal sends an escape sequence in one write; a person's next key comes later


class TypeAhead:
    """What was typed during one turn on `stream` (a terminal; anything else is never read)."""

    def __init__(self, stream: Any) -> None:
        self.fd = tty_fd(stream)
        self._kept = bytearray()
        self.escaped = False  # an Esc stopped the turn (once: more presses must not cut its clean-up)

    @property
    def text(self) -> str:
        """The keys kept, as the terminal sent them (an Esc that stopped the turn is not among them)."""
        return codecs.decode(bytes(self._kept), "utf-8", "replace")

    def drop(self) -> None:
        """Forget the keys kept (a Ctrl-C: the terminal drops its own queue on a signal too)."""
        self._kept.clear()

    @contextmanager
    def watching(self, on_escape: Callable[[], None]) -> Iterator[None]:
        """Inside a running event loop: read the terminal as keys arrive; `on_escape()` on a lone Esc."""
        if self.fd is None:
            yield
            return
        import termios

        fd = self.fd
        try:
            saved = termios.tcgetattr(fd)
        except termios.error:
            yield
            return
        raw = list(saved)
        raw[3] &= ~termios.ICANON  # keys as they come; ISIG stays on, so Ctrl-C still interrupts
        # A read returns what is there, never waits: a Ctrl-C empties the terminal's queue, also
        # between the loop seeing keys there and the read, and a read that waited then hung the chat
        # (the Ctrl-C only cancels the turn's task, which needs this very loop to run).
        raw[6] = list(saved[6])
        raw[6][termios.VMIN], raw[6][termios.VTIME] = 0, 0
        loop = asyncio.get_running_loop()
        termios.tcsetattr(fd, termios.TCSANOW, raw)
        _tell(fd, PASTE_ON)
        loop.add_reader(fd, self._read, loop, on_escape)
        try:
            yield
        finally:
            loop.remove_reader(fd)
            _tell(fd, PASTE_OFF)
            try:
                termios.tcsetattr(fd, termios.TCSANOW, saved)
            except termios.error:
                pass  # the terminal went away meanwhile

    def _read(self, loop: asyncio.AbstractEventLoop, on_escape: Callable[[], None]) -> None:
        try:
            data = os.read(self.fd, 1024)  # type: ignore[arg-type]
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # the terminal is gone: stop reading it, the turn goes on
            data = None
        if not data:
            # Nothing: the queue was emptied since (a Ctrl-C), or the terminal hung up, which stays
            # readable: a reader left on it would be called again at once, forever.
            if data is None or _hung_up(self.fd):  # type: ignore[arg-type]
                loop.remove_reader(self.fd)  # type: ignore[arg-type]
            return
        self._kept += data
        # Esc at the end of what came (alone, or after keys read together with it when the loop was
        # busy): it stops the turn if nothing follows it soon — a sequence would have come with it.
        escapes = len(data) - len(data.rstrip(bytes([ESC])))
        if escapes:
            loop.call_later(ESC_ALONE_S, self._escape_if_alone, len(self._kept) - escapes, on_escape)

    def _escape_if_alone(self, start: int, on_escape: Callable[[], None]) -> None:
        if len(self._kept) > start and all(byte == ESC for byte in self._kept[start:]):
            del self._kept[start:]  # it stopped the turn; it is not the first half of the next key
            if not self.escaped:
                self.escaped = True
                on_escape()


def _hung_up(fd: int) -> bool:
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return any(events & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, events in poller.poll(0))


def _tell(fd: int, sequence: bytes) -> None:
    # The terminal is one file open for reading and writing (the shell's fds 0, 1 and 2 share it);
    # where this one is read-only, pastes are typed keys, as before.
    try:
        os.write(fd, sequence)
    except OSError:
        pass

"""SIGTERM (CI timeouts, systemd, `docker stop`, `timeout`) cancels like Ctrl-C wherever a command waits
outside asyncio's reach: the command's own `except KeyboardInterrupt` then runs for both, with the
same message, the same exit code (130) and the same progress kept.

Inside a running event loop, SIGTERM is the loop's (`loop.add_signal_handler(SIGTERM, task.cancel)`,
cli/driving.py, cli/chat/turn.py): it cancels the task at its next await. A blocking read on the
loop's thread (an approval's question) never reaches one, so `question()` takes both signals over
for the read. The kernel gives a signal to any thread of the process that does not block it (the
spinner's too); there only the C half of Python's handler runs, and a read on the main thread would
go on waiting. So a question waits for its terminal with `wait_for_input`, which also wakes on the
signal (a wake-up pipe) and lets Python's handler raise in the main thread.

Where a Ctrl-C and a SIGTERM must end differently (the chat: Ctrl-C stops a turn and the prompt comes
back; SIGTERM asks the process to end), `terminated()` says whether a SIGTERM came: every handler
here notes it (`note_terminated`) before it interrupts or cancels."""

from __future__ import annotations

import os
import select
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises KeyboardInterrupt: every `except KeyboardInterrupt` handles
    both alike, and a caller that must tell them apart catches this one (or asks `terminated()`)."""


_terminated = threading.Event()


def note_terminated() -> None:
    """A SIGTERM came: from here on the process is on its way out (`terminated()`)."""
    _terminated.set()


def terminated() -> bool:
    """Whether a SIGTERM came since the process started (or `forget_terminated`)."""
    return _terminated.is_set()


def forget_terminated() -> None:
    _terminated.clear()


def _interrupt(signum: int, frame: Any) -> None:
    note_terminated()
    raise Terminated


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Inside, SIGTERM raises KeyboardInterrupt, as Ctrl-C does (synchronous work: `kb add`, a batch's
    driver). Outside the main thread (where no handler can be set) it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def question() -> Iterator[None]:
    """A blocking read on the event loop's thread: inside, Ctrl-C and SIGTERM raise KeyboardInterrupt at
    the read itself (the approval hook turns it into the run's cancel). The loop's wake-up pipe is set
    aside meanwhile, so the loop does not see the same SIGTERM again afterwards and cancel the run's
    clean-up a second time."""
    global _woken
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    wakeup = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    try:
        previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
        previous_term = signal.signal(signal.SIGTERM, _interrupt)
        try:
            _woken = read_end
            yield
        finally:
            _woken = None
            signal.signal(signal.SIGTERM, previous_term)
            signal.signal(signal.SIGINT, previous_int)
    finally:
        signal.set_wakeup_fd(wakeup)
        os.close(read_end)
        os.close(write_end)


_woken: int | None = None  # the wake-up pipe's read end while a question waits


def wait_for_input(fd: int) -> None:
    """Inside `question()`: return once `fd` (a terminal) has input. A Ctrl-C or SIGTERM meanwhile
    raises here, whichever thread the kernel gave it to; a signal whose handler returns is waited
    through. Outside a question (or off the main thread) it returns at once: the read waits."""
    if _woken is None:
        return
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    poll.register(_woken, select.POLLIN)
    while True:
        ready = {ready_fd for ready_fd, _ in poll.poll()}
        if _woken in ready:
            # Python's handler runs on this thread before the next line: a raising one ends the wait
            os.read(_woken, 512)
        if fd in ready:
            return

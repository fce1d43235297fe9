"""Children that die with arreio: a `preexec_fn` asking Linux to SIGKILL the child when arreio dies.

A child started in a session of its own (so a Ctrl-C at the terminal does not kill git halfway
through writing its index) outlives an arreio that is SIGKILLed, OOM-killed or loses its machine's
power button race: git goes on writing the working tree behind the back of the next `arreio undo`.
`PR_SET_PDEATHSIG` ties the child's life to ours without giving up its own session. Elsewhere
(macOS) there is no such call; the store's lock, which the child holds too, makes the next user
wait for a leftover instead (`engine/checkpoints/store.py`).
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's `prctl`, looked up once and before any fork: the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with_us() -> Callable[[], None] | None:
    """A `preexec_fn` for `subprocess`: the child gets SIGKILL when this process dies (Linux; None
    elsewhere). The signal follows the thread that started the child, so start it from one that
    waits for it (`subprocess.run`), never from a thread that may end first."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # we died between the fork and the call: nobody would send it
            os._exit(1)

    return preexec

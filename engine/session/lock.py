"""One run per session at a time: two processes appending to one session would interleave turns and
run the same tool twice. An advisory `flock` on `<session>.lock`, held for the whole run."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from arreio.engine.core.errors import UsageError


class SessionLock:
    """`acquire()` or a `UsageError` naming the process that holds it; `release()` when the run ends.
    The kernel drops the lock when the process dies, so a killed run never leaves a stale lock."""

    def __init__(self, session_path: Path) -> None:
        self.path = session_path.with_name(session_path.name + ".lock")
        self._fd: int | None = None

    def acquire(self, session_id: str) -> SessionLock:

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise UsageError(
                f"session {session_id} is in use by another arreio process (pid {holder}); "
                "wait for it to finish or stop it first"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

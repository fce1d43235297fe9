"""A real pseudo-terminal for tests that meet arreio the way a person does: the child gets the pty
as its controlling terminal, so `isatty()` holds, a typed Ctrl-C (0x03) becomes SIGINT from the line
discipline, and what it prints is read back exactly as a terminal would show it."""

from __future__ import annotations

import ctypes
import fcntl
import os
import platform
import re
import select
import signal
import subprocess
import termios
import time
from pathlib import Path

import pytest


class Terminal:
    """One child process on a fresh pty. `expect` reads until a pattern shows; `type` writes keys. The
    waits are generous (a minute): they bound a hang, and a busy machine may take seconds to start one."""

    def __init__(
        self, argv: list[str], *, cwd: Path, env: dict[str, str], columns: int = 120, stdout: int | None = None
    ) -> None:
        """`stdout`: where the child's stdout goes instead of the terminal (`subprocess.PIPE`: `| cat`)."""
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, bytes([40, 0, columns, 0, 0, 0, 0, 0]))

        def controlling_terminal() -> None:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # as from a shell, even if the runner ignores it

        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**env, "TERM": "xterm", "COLUMNS": str(columns)},
            stdin=slave,
            stdout=slave if stdout is None else stdout,
            stderr=slave,
            preexec_fn=controlling_terminal,
            close_fds=True,
        )
        os.close(slave)
        self.master = master
        self.output = ""

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        if not chunk:
            return False
        self.output += chunk.decode("utf-8", errors="replace")
        return True

    def expect(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """Read until `pattern` (a regex) shows in the output; AssertionError with the output if not."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.output)
            if found:
                return found
            left = deadline - time.monotonic()
            if left <= 0 or (not self._read(min(left, 0.2)) and self.proc.poll() is not None and not self._read(0.1)):
                raise AssertionError(f"{pattern!r} never showed; the terminal shows:\n{self.plain}")

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait(self, timeout: float = 60.0) -> int:
        """The exit code, reading what is left to show meanwhile."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        while self._read(0.05):
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            raise AssertionError(f"still running after {timeout} s; the terminal shows:\n{self.plain}")
        os.close(self.master)
        return self.proc.returncode

    @property
    def plain(self) -> str:
        """The output without colour and cursor sequences, line endings as `\\n`."""
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", self.output).replace("\r\n", "\n")


# The kernel gives a signal sent to a process to any of its threads that does not block it; in one that
# is not the main thread only the C half of Python's handler runs, and a read waiting on the main thread
# is not woken. A test sends it to such a thread on purpose: the kernel's own choice is rare and racy.
TGKILL = {"x86_64": 234, "aarch64": 131}  # the syscall's number: Python has no os.tgkill


def signal_another_thread(pid: int, sig: int) -> None:
    """`sig` to a thread of process `pid` other than its main one (the test fails when it has none)."""
    number = TGKILL.get(platform.machine())
    if number is None:
        pytest.skip(f"tgkill's number on {platform.machine()} is not known here")
    others = [int(tid) for tid in os.listdir(f"/proc/{pid}/task") if int(tid) != pid]
    assert others, "the run at its question has no thread but its main one: nothing to test"
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.syscall(number, pid, others[0], sig) == 0, os.strerror(ctypes.get_errno())

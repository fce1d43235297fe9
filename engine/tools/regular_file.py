"""Opening a file someone named — the model in a tool call, a user in `kb add` — without ever
blocking on it.

Only regular files are read. A FIFO blocks `open()` until a writer comes, a character device
(/dev/zero) reads forever, a socket cannot be opened at all. A thread stuck in `open()` cannot be
cancelled: the tool's timeout fires, but `asyncio.run` waits for that thread at shutdown, so the
process never exits and ignores SIGINT and SIGTERM. So what a path names is decided from `os.stat`
first, without opening it (an open would also wake a writer waiting at a FIFO's other end), and the
open that follows uses O_NONBLOCK and is checked again with `fstat`: a FIFO swapped in between is
refused, not waited on.
"""

from __future__ import annotations

import os
import stat

_KINDS = (
    (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
)


def kind(mode: int) -> str | None:
    """What a file of this `st_mode` is when it is not a regular file ("a named pipe", "a socket",
    "a directory", …); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "a special file")


class NotRegularFile(Exception):
    """The path names something other than a regular file; `kind` says what ("a named pipe")."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind

    def because(self, shown: str) -> str:
        """'pipe is a named pipe, not a regular file' for the path as the reader knows it."""
        return f"{shown} is {self.kind}, not a regular file"


def open_regular(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """A read-only descriptor on `path` (symlinks followed) and its `fstat`, when it is a regular
    file; the caller closes the descriptor. Raises `NotRegularFile` for anything else (nothing is
    left open, and nothing is opened when `os.stat` already tells) and `OSError` when it cannot be
    looked at or opened."""
    found = kind(os.stat(path).st_mode)
    if found is not None:
        raise NotRegularFile(found)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        found = kind(info.st_mode)
        if found is not None:  # replaced between the stat and the open
            raise NotRegularFile(found)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_to_end(fd: int, size: int, limit: int | None = None) -> bytes:
    """What is left of the file open on `fd`, or its first `limit` bytes; `size` (its `fstat`) sizes
    the reads, so a file read whole takes one read and one for the end. Plain `os.read`: a buffered
    file object on the descriptor asks for three more system calls (fstat, isatty, lseek; issue 23)."""
    parts, got = [], 0
    while limit is None or got < limit:
        want = max(size - got + 1, 4096)
        part = os.read(fd, want if limit is None else min(want, limit - got))
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)

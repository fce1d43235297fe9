"""Opening a file without ever blocking on it, and reading one whole only when it is of a sane size.

Only regular files are read. A FIFO blocks `open()` until a writer comes, a character device
(/dev/zero, /dev/urandom) reads forever, a socket cannot be opened at all. A thread stuck in `open()`
cannot be cancelled: the tool's timeout fires, but `asyncio.run` waits for that thread at shutdown, so
the process never exits and ignores SIGINT and SIGTERM. So what a path names is decided from `os.stat`
first, without opening it (an open would also wake a writer waiting at a FIFO's other end), and the
open that follows uses O_NONBLOCK and is checked again with `fstat`: a FIFO swapped in between is
refused, not waited on.

Every file arreio reads whole — one the user named (goal, plan, script, config, cassette), its own
state (sessions, skills, memory, usage, journals) — is read with `read_bytes` / `read_text`, which
also refuse a file larger than the limit for its kind (`Limit`) before reading a byte of it: a 2 GB
sparse file named as a plan is one line, not a MemoryError. A refusal is an `OSError` (`UnfitFile`)
whose `strerror` says why in words ("a named pipe, not a regular file"), so a reader's own
`except OSError` names the file it was given, or skips the one of many it met.
"""

from __future__ import annotations

import errno
import os
import stat

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)

_MB = 1024 * 1024


class Limit:
    """The most arreio reads of each kind of file, in bytes (docs/files-on-disk.md states them)."""

    GOAL = 1 * _MB  # a goal file, or the goal on stdin
    CONFIG = 1 * _MB  # config.yaml, the user's and the project's (MCP servers are in it)
    PLAN = 4 * _MB  # a plan, a batch suite, an output schema
    SCRIPT = 64 * _MB  # a scripted model's replies (`--script`)
    SKILL = 1 * _MB  # a SKILL.md
    MEMORY = 256 * _MB  # MEMORY.md / USER.md, a memory substore
    RECORD = 16 * _MB  # a small record arreio wrote: report.json, .usage.json, batch.json, a ledger
    SESSION = 1024 * _MB  # a session, a cassette
    OUTPUT = 64 * _MB  # a run's output a `file` gate's pattern is matched against
    JOURNAL = 1024 * _MB  # an append-only journal: audit.jsonl, a batch's results.jsonl, events.jsonl


def kind(mode: int) -> str | None:
    """What a file of this `st_mode` is when it is not a regular file ("a named pipe", "a socket",
    "a directory", …); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def size_text(n: int) -> str:
    """A size in words: '900 bytes', '12 KB', '1.5 MB', '2 GB'."""
    if n < 1024:
        return f"{n:,} bytes"
    if n < _MB:
        return f"{n / 1024:,.0f} KB"
    value, unit = (n / _MB, "MB") if n < 1024 * _MB else (n / 1024 / _MB, "GB")
    return f"{value:,.1f}".removesuffix(".0") + f" {unit}"


class UnfitFile(OSError):
    """A file arreio does not read: not a regular file, or larger than the limit for its kind.
    `strerror` says which, in words, for a reader's `cannot read X: {strerror}`."""

    def because(self, shown: str) -> str:
        """'plan.yaml is a named pipe, not a regular file' for the path as the reader knows it."""
        return f"{shown} is {self.strerror}"


class NotRegularFile(UnfitFile):
    """The path names something other than a regular file; `kind` says what ("a named pipe")."""

    def __init__(self, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file")
        self.kind = kind


class TooLarge(UnfitFile):
    """The file is larger than `limit` bytes: `size` of them, or (None) more than it could tell,
    for a pipe or a file that grew while it was read."""

    def __init__(self, size: int | None, limit: int) -> None:
        said = f"{size_text(size)}, over" if size is not None else "over"
        super().__init__(errno.EFBIG, f"{said} the {size_text(limit)} limit")
        self.size, self.limit = size, limit


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
    file object on the descriptor asks for three more system calls (fstat, isatty, lseek)."""
    parts, got = [], 0
    while limit is None or got < limit:
        want = max(size - got + 1, 4096)
        part = os.read(fd, want if limit is None else min(want, limit - got))
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def read_bytes(path: str | os.PathLike[str], *, limit: int) -> bytes:
    """The whole of a regular file of at most `limit` bytes. Raises `NotRegularFile`, `TooLarge`
    (from its size, before reading; or, for a file that grows while read, after `limit` + 1 bytes)
    or the `OSError` of the stat, open or read."""
    fd, info = open_regular(path)
    try:
        if info.st_size > limit:
            raise TooLarge(info.st_size, limit)
        data = read_to_end(fd, info.st_size, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise TooLarge(None, limit)
    return data


def read_text(path: str | os.PathLike[str], *, limit: int, encoding: str = "utf-8", errors: str = "strict") -> str:
    """`read_bytes` decoded (universal newlines, as `Path.read_text` reads); a UnicodeDecodeError
    when it is not text in `encoding`."""
    text = read_bytes(path, limit=limit).decode(encoding, errors)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text

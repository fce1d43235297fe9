"""An exclusive advisory lock held on a sidecar file, for read-modify-write of shared state files
(MEMORY.md, the skills' usage sidecar) by several arreio processes at once."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive(lock_path: Path) -> Iterator[int]:
    """Hold the lock on `lock_path` (created when missing) for the block, waiting while another
    process holds it. Not re-entrant: taking it again inside the block waits forever. The block gets
    the lock's descriptor: a child started with it (`pass_fds`) holds the lock too, until it exits,
    even when this process is killed first."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    # Only its owner may open it (an 0664 lock let another user hold everyone's writes), and never
    # through a link (a lock file made a link would be followed and created wherever it pointed).
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as error:
        if os.path.islink(lock_path):
            raise OSError(
                error.errno, f"{lock_path} is a link; arreio does not follow a lock file", str(lock_path)
            ) from None
        raise
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield fd
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)

"""An exclusive advisory lock held on a sidecar file, for read-modify-write of shared state files
(MEMORY.md, the skills' usage sidecar) by several arreio processes at once."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    """Hold the lock on `lock_path` (created when missing) for the block, waiting while another
    process holds it. Not re-entrant: taking it again inside the block waits forever."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

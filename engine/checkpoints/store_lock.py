"""The checkpoint store's lock: one for the whole store, held by the arreio process that writes and
by every git it starts meanwhile — so a git that outlives a killed arreio is waited for by the next
one instead of raced — and the lock files a killed git left, cleared by whoever holds it next."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arreio.engine.core.file_lock import exclusive


class StoreLock:
    """`with lock.held():` while this process writes the store; `pass_fds` hands the lock to a child
    started meanwhile (a flock belongs to the open file, so the child holds it until it exits, even
    after this process was killed)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        with exclusive(self.path) as fd:
            self._fd = fd
            try:
                yield
            finally:
                self._fd = None

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return () if self._fd is None else (self._fd,)


def clear_stale_git_locks(tree_dir: Path, git_dir: Path) -> None:
    """Remove the lock files a killed git left ("Unable to create '….lock': File exists" failed every
    later checkpoint and undo). Call holding the store's lock: every git that had it is gone then
    (each held it too), and no git of the store writes without it, so a lock file found is nobody's."""
    stale = [
        tree_dir / "index.lock",
        tree_dir / "restore.index.lock",
        git_dir / "packed-refs.lock",
        git_dir / "config.lock",
        *(git_dir / "refs").rglob("*.lock"),
    ]
    for path in stale:
        path.unlink(missing_ok=True)

"""Crash-safe whole-file writes (docs/architecture.md invariant 2), used by every layer that rewrites a file.

A rewrite goes to a temp file in the same folder, is fsynced, then `os.replace`d over the target and
the folder is fsynced, so a reader — or the next process after a crash — sees the old file or the
new one, never half of either. An existing file keeps its permission bits; a new one gets the
umask-derived mode a plain `open()` would give (mkstemp alone would make it 0600).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask_mode() -> int:
    current = os.umask(0)
    os.umask(current)
    return 0o666 & ~current


_NEW_FILE_MODE = _umask_mode()


def write_atomic(path: Path, data: bytes | str, *, durable: bool = True, sync_folder: bool = True) -> None:
    """Replace `path` with `data` (str is written as UTF-8, newlines untouched), creating parents.
    `durable=False` (config `fsync: false`) skips both fsyncs: still all-or-nothing against a crash of
    the process, not against a power cut. `sync_folder=False`: the caller fsyncs the folder once
    after writing several files into it (`fsync_dir`)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = _NEW_FILE_MODE
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        # the temp file never held the only copy of anything, so removing it is safe
        Path(temp).unlink(missing_ok=True)
        raise
    if durable and sync_folder:
        fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable; a platform that cannot open a folder is skipped."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

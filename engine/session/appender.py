"""The session file's append handle (docs/architecture.md invariant 2): each record goes down as one
whole line in one write(2) on an O_APPEND descriptor, fsynced unless the caller leaves the fsync to
the next synced write.

`durable=False` is config `fsync: false` (benchmarks and throwaway sessions): the line still lands
whole, but a power cut may lose it. A write made with `sync=False` (a tool result, a request record)
is made durable by the next synced one (the model's next reply, a run marker, `close()`): a result a
power cut takes heals as `interrupted`, which is what a call cut off by the crash gets anyway.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from arreio.engine.session.format import ends_with_newline


class Appender:
    """Appends to one file, keeping its handle open between writes; `close()` syncs what is owed."""

    def __init__(self, path: Path, *, durable: bool = True) -> None:
        self.path = path
        self.durable = durable
        self._handle: io.FileIO | None = None
        self._unsynced = False

    def write(self, data: bytes, *, sync: bool) -> None:
        """Write `data` (whole lines) at the file's end; fsync it when `sync` (and durable)."""
        if self._handle is None:
            self._handle = open(self.path, "ab", buffering=0)  # noqa: SIM115 - kept open between appends
            if self._handle.tell() > 0 and not ends_with_newline(self.path):
                # Someone left a partial line: start ours on a fresh line so it stays whole.
                data = b"\n" + data
        try:
            view = memoryview(data)
            while view:  # a short write only happens for huge batches or a full disk
                view = view[self._handle.write(view) :]
            if self.durable and sync:
                os.fsync(self._handle.fileno())
                self._unsynced = False
            elif self.durable:
                self._unsynced = True
        except BaseException:
            # A failed write may have left part of a line: reopening checks the tail and starts clean.
            self.close()
            raise

    def sync(self) -> None:
        """Make every write so far durable (one fsync, only when one is owed)."""
        if self._handle is not None and self._unsynced and self.durable:
            os.fsync(self._handle.fileno())
        self._unsynced = False

    def close(self) -> None:
        """Sync what is owed and let the handle go (the next write opens it again)."""
        if self._handle is not None:
            self.sync()
            self._handle.close()
            self._handle = None

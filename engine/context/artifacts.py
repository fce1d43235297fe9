"""Where pruned results' raw text goes: one append-only text file per session.

A pruned result leaves the history only after its raw text is on disk. Creating one file per result
cost ~0.5 ms of system time each on the measured machine (a long run prunes ~1,000 results), so the
texts are appended to `artifacts/pruned.txt` instead, one block each, and the stub names the block's
lines — `read_file(path, offset=first, limit=count)` shows exactly that result, numbered as usual.

A block is a header line (`=== pruned result of call <id> (<tool>): lines A–B ===`) followed by the
text, which always ends in a newline here. Only texts whose lines `read_file` counts exactly as we
do go in (no CR, no NUL: CR is a line break to a text-mode read, NUL makes the whole file binary);
any other text gets a file of its own, `artifacts/<call id>.txt`, as before. Appends are one write
each; a torn last block (a crash mid-write) is closed with a newline before the next one, and its
result was never pruned (the prune line is written after the text), so nothing points into it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from arreio.engine.core.atomic import fsync_dir, write_atomic

__all__ = ["SHARED_NAME", "ArtifactFile", "Saved"]

SHARED_NAME = "pruned.txt"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")  # characters a call id may hold that a file name should not


class Saved:
    """Where one result's raw text is: a path and, in the shared file, its line range."""

    __slots__ = ("first", "last", "path")

    def __init__(self, path: Path, first: int | None = None, last: int | None = None) -> None:
        self.path, self.first, self.last = path, first, last

    def where(self, shown: str) -> str:
        """How the stub names it (`shown`: the path as the model should pass it to read_file)."""
        if self.first is None or self.last is None:
            return shown
        limit = self.last - self.first + 1
        return f"{shown}, lines {self.first}-{self.last} (read_file offset={self.first}, limit={limit})"


class ArtifactFile:
    """The artifacts folder of one session: the shared file, plus single files for odd texts."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / SHARED_NAME
        self._lines: int | None = None  # lines in the shared file, learned on first use
        self._saved: dict[str, Saved] = {}  # call id -> where its text went, this process
        self._dirty = False  # appended since the last `sync`
        self._created = False  # a new file (or the folder) appeared since the last `sync`
        self._handle: Any = None  # the shared file, open from a pass's first append to its `sync`
        self._singles: set[str] | None = None  # names in the folder (`_single_names`)
        self.redactor: Any = None  # the run's one redactor: the history holds what the model saw, the disk no secret

    def save(self, call_id: str, tool: str, content: str, *, durable: bool) -> Saved:
        """Put `content` on disk (flushed; fsynced at `sync` when durable) and say where it is."""
        known = self._saved.get(call_id)
        if known is not None:
            return known
        if self.redactor is not None:
            content = self.redactor.text(content)
        name = f"{_UNSAFE.sub('_', call_id)}.txt"
        if name in self._single_names():  # saved by an older arreio (or as an odd text) before
            saved = Saved(self.folder / name)
        elif "\r" in content or "\0" in content:
            write_atomic(self.folder / name, content, durable=durable, sync_folder=False)
            self._created = True
            self._single_names().add(name)
            saved = Saved(self.folder / name)
        else:
            saved = self._append(call_id, tool, content)
        self._saved[call_id] = saved
        return saved

    def _single_names(self) -> set[str]:
        """The folder's file names, listed once (a `stat` for every pruned result). Only
        arreio writes here (the agent's tools cannot: docs/architecture.md invariant 10), so the list stays true."""
        if self._singles is None:
            try:
                self._singles = set(os.listdir(self.folder))
            except (FileNotFoundError, NotADirectoryError):
                self._singles = set()
        return self._singles

    def _append(self, call_id: str, tool: str, content: str) -> Saved:
        body = content if content.endswith("\n") else content + "\n"
        count = body.count("\n")
        lines = self._line_count()
        prefix = ""
        if lines < 0:  # a torn last line: close it first (it counts as one line to a reader)
            prefix, lines = "\n", -lines
        first = lines + 2  # after the header line
        last = first + count - 1
        payload = (f"{prefix}=== pruned result of call {call_id} ({tool}): lines {first}–{last} ===\n{body}").encode()
        if self._handle is None:  # unbuffered: each block goes down in one write(2), whole or torn
            self._handle = open(self.path, "ab", buffering=0)  # noqa: SIM115 - closed by `sync`
        self._handle.write(payload)
        self._lines = last
        self._dirty = True
        return Saved(self.path, first, last)

    def _line_count(self) -> int:
        """Lines in the shared file; negative when its last line has no newline (torn)."""
        if self._lines is not None:
            return self._lines
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._created = True
            self._lines = 0
            return 0
        count = data.count(b"\n")
        if data and not data.endswith(b"\n"):
            return -(count + 1)
        self._lines = count
        return count

    def sync(self, durable: bool) -> None:
        """Make this pass's texts durable: one fsync of the shared file, one of the folder if a
        file appeared in it (each single file was fsynced as it was written)."""
        handle, self._handle = self._handle, None
        self._singles = None  # listed again by the next pass
        if handle is not None:
            try:
                if durable and self._dirty:
                    os.fsync(handle.fileno())
            finally:
                handle.close()
        if durable and self._created:
            fsync_dir(self.folder)
        self._dirty = self._created = False

"""Append-only substores: `.arreio/memory/<name>.jsonl`, records of what happened.

Five substores (`SUBSTORES`). Each file starts with a versioned header line
`{"type":"header","substore":"decision","version":1}`, then one record per line:
`{"type":"record","id":"dec-01J…","agent":"cli","at":"2026-06-27T16:00:00.000Z","payload":{…}}`.

Appends are one whole line written with a single `write` on an `O_APPEND` descriptor under an
exclusive `flock`, then fsynced (docs/architecture.md invariant 2). A torn last line (a crash mid-append) is
detected on read and on the next append, cut off with a warning, and never costs an earlier line.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from arreio.engine.core.errors import UsageError
from arreio.engine.core.ids import iso_ms, parse_utc
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.ports import Clock, SystemClock
from arreio.engine.core.regular_file import Limit, read_bytes
from arreio.engine.core.regular_file import kind as file_kind
from arreio.engine.walls.redact import Redactor
from arreio.memory.record_id import new_record_id

SUBSTORES = ("episodic", "semantic", "procedural", "decision", "transcript")
PREFIXES = {"episodic": "epi", "semantic": "sem", "procedural": "pro", "decision": "dec", "transcript": "tra"}
FORMAT_VERSION = 1

log = logging.getLogger("arreio.memory.substores")


class SubstoreRecord(BaseModel):
    """One record: a prefixed, time-sortable id, the agent that wrote it, when (ISO-8601 UTC with
    milliseconds), and its payload."""

    id: str
    agent: str
    at: str
    payload: dict[str, Any]


def check_substore(name: str) -> str:
    """`name` when it is one of the five, else a `UsageError` listing them."""
    if name not in SUBSTORES:
        raise UsageError(f"unknown memory substore {name!r}: use one of {', '.join(SUBSTORES)}.")
    return name


def parse_since(value: str) -> datetime:
    """An ISO-8601 date or time as aware UTC (naive values are taken as UTC)."""
    return parse_utc(value, what="--since")


class Substores:
    """The five append-only substores of a state folder. `diagnostics` collects read warnings
    (torn tails repaired, unreadable lines skipped) for the caller to show. The redactor is
    required: every payload is redacted before it is written (the run's one redactor, or the
    environment's outside a run); `redactor=None` opens the substores for reading only. `logged`:
    each diagnostic also goes to the log (a run's only way to say it); a caller that prints the
    diagnostics itself says False, or each is said twice."""

    def __init__(
        self, state_dir: Path, clock: Clock | None = None, *, redactor: Redactor | None, logged: bool = True
    ) -> None:
        self.folder = Path(state_dir) / "memory"
        self.clock = clock or SystemClock()
        self.redactor = redactor
        self.logged = logged
        self.diagnostics: list[str] = []
        self.durable = True  # fsync each record; a run with config `fsync: false` turns it off

    def path(self, substore: str) -> Path:
        return self.folder / f"{check_substore(substore)}.jsonl"

    # -- writing -------------------------------------------------------------------------------
    def append(self, substore: str, agent: str, payload: dict) -> SubstoreRecord:
        """Append one record and return it (its id and timestamp come from the clock)."""
        path = self.path(substore)
        if self.redactor is None:
            raise RuntimeError("these substores were opened for reading (no redactor): they cannot append")
        if not agent or not agent.strip():
            raise UsageError("a substore record needs the name of the agent that wrote it.")
        now = self.clock.now()
        record = SubstoreRecord(
            id=new_record_id(PREFIXES[substore], now),
            agent=agent.strip(),
            at=iso_ms(now),
            payload=self.redactor.value(dict(payload)),
        )
        try:
            line = json.dumps({"type": "record", **record.model_dump()}, ensure_ascii=False) + "\n"
        except (TypeError, ValueError) as error:
            raise UsageError(f"{substore} payload is not JSON-serialisable: {error}") from None
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            info = os.fstat(fd)
            if (found := file_kind(info.st_mode)) is not None:  # a FIFO would swallow the record, then block
                raise UsageError(f"{path.name} is {found}, not a regular file; the record is not written.")
            size = info.st_size
            if size and self._repair_tail(fd, path):
                size = os.fstat(fd).st_size
            if size == 0:
                header = {"type": "header", "substore": substore, "version": FORMAT_VERSION}
                line = json.dumps(header) + "\n" + line
            _write_all(fd, line.encode("utf-8"))
            if self.durable:
                os.fsync(fd)
        finally:
            os.close(fd)  # closing releases the lock
        return record

    def _repair_tail(self, fd: int, path: Path) -> bool:
        """Cut a torn last line (no trailing newline) off the file. Call holding the lock."""
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return False
        data = os.pread(fd, size, 0)
        keep = data.rfind(b"\n") + 1
        os.ftruncate(fd, keep)
        os.fsync(fd)
        self._warn(f"{path.name}: repaired a torn last line ({size - keep} bytes from an interrupted write)")
        return True

    # -- reading -------------------------------------------------------------------------------
    def records(self, substore: str) -> list[SubstoreRecord]:
        """Every readable record of a substore, in file (append) order."""
        path = self.path(substore)
        try:
            data = read_bytes(path, limit=Limit.MEMORY)
        except FileNotFoundError:
            return []
        except OSError as error:  # a pipe, a device, a huge file: this substore is skipped, not the others
            self._warn(f"{path.name}: skipped, cannot read it ({error.strerror or error})")
            return []
        if data and not data.endswith(b"\n"):
            data = self._repair_on_read(path, data)
        records: list[SubstoreRecord] = []
        for number, raw in enumerate(data.split(b"\n"), 1):
            if not raw.strip():
                continue
            try:
                item = json_loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError):
                self._warn(f"{path.name}:{number}: skipped an unreadable line")
                continue
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "header":
                version = item.get("version")
                if not isinstance(version, int) or version > FORMAT_VERSION:
                    raise UsageError(
                        f"{path.name} has format version {version!r}; this arreio reads version {FORMAT_VERSION}."
                    )
                continue
            try:
                records.append(SubstoreRecord.model_validate({k: v for k, v in item.items() if k != "type"}))
            except (ValidationError, AttributeError):
                self._warn(f"{path.name}:{number}: skipped a line that is not a record")
        return records

    def _repair_on_read(self, path: Path, data: bytes) -> bytes:
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:  # read-only: ignore the torn line without repairing it
            self._warn(f"{path.name}: ignored a torn last line (file not writable, not repaired)")
            return data[: data.rfind(b"\n") + 1]
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._repair_tail(fd, path)
            return os.pread(fd, os.fstat(fd).st_size, 0)
        finally:
            os.close(fd)

    def list(
        self, substore: str, *, limit: int | None = None, agent: str | None = None, since: str | None = None
    ) -> tuple[list[SubstoreRecord], int]:
        """Records newest first, filtered by agent and time (`since` inclusive), at most `limit`;
        the int is the total number of records in the store, before filtering."""
        if limit is not None and limit < 0:
            raise UsageError(f"--limit must be 0 or more, got {limit}.")
        everything = self.records(substore)
        start = parse_since(since) if since else None
        chosen = []
        for record in sorted(everything, key=lambda r: (r.at, r.id), reverse=True):
            if agent is not None and record.agent != agent:
                continue
            if start is not None and _record_time(record) < start:
                continue
            chosen.append(record)
        return (chosen if limit is None else chosen[:limit]), len(everything)

    def get(self, substore: str, record_id: str) -> SubstoreRecord | None:
        """The record with this id, or with the one id that starts with it (as `sessions show` and
        `batch` take a prefix); None when none does. A prefix of several is a UsageError naming them."""
        records = self.records(substore)
        exact = next((r for r in records if r.id == record_id), None)
        if exact is not None or not record_id:
            return exact
        matches = [r for r in records if r.id.startswith(record_id)]
        if len(matches) > 1:
            shown = ", ".join(r.id for r in matches[:8]) + (f", … ({len(matches)} in all)" if len(matches) > 8 else "")
            raise UsageError(
                f"record prefix {record_id!r} is ambiguous in the {substore} substore: {shown} — give more characters"
            )
        return matches[0] if matches else None

    def _warn(self, message: str) -> None:
        self.diagnostics.append(message)
        if self.logged:
            log.warning(message)


def _record_time(record: SubstoreRecord) -> datetime:
    try:
        return parse_since(record.at)
    except UsageError:  # a hand-written odd timestamp sorts as oldest rather than failing the listing
        return datetime.min.replace(tzinfo=UTC)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]

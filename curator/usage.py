"""Usage telemetry: the `skills/.usage.json` sidecar (atomic rewrites, versioned).

One record per skill name. The store stamps times from an injected clock — the same clock the
curator uses — so a test (or `curator run --now`) sees one consistent timeline.

File format, version 1:
    {"version": 1,
     "curator": {"last_run_at": ISO | null, "last_run": {...} | null},
     "skills": {"<name>": {<UsageRecord fields>}}}
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.errors import UsageError
from arreio.engine.core.file_lock import exclusive
from arreio.engine.core.ids import iso_ms
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.ports import Clock
from arreio.engine.core.regular_file import Limit, read_text

VERSION = 1
State = Literal["active", "stale", "archived"]
STATES: tuple[State, ...] = ("active", "stale", "archived")
ACTIVITY_FIELDS = ("last_used_at", "last_viewed_at", "last_patched_at", "last_restored_at")


@dataclass(frozen=True)
class UsageRecord:
    """Telemetry and lifecycle state for one skill. Times are timezone-aware UTC datetimes.

    `last_restored_at` is ours beyond the issue's list: a restore from the archive is an explicit
    user act and counts as activity, so a restored skill is not archived again on the next run.
    """

    name: str
    created_at: datetime
    created_by: str = "user"
    state: State = "active"
    pinned: bool = False
    use_count: int = 0
    view_count: int = 0
    patch_count: int = 0
    last_used_at: datetime | None = None
    last_viewed_at: datetime | None = None
    last_patched_at: datetime | None = None
    last_restored_at: datetime | None = None
    archived_at: datetime | None = None

    def last_activity(self) -> datetime:
        """The newest `last_*_at`, else `created_at`."""
        stamps = [getattr(self, name) for name in ACTIVITY_FIELDS if getattr(self, name) is not None]
        return max(stamps) if stamps else self.created_at

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if key == "name":
                continue
            out[key] = iso_ms(value) if isinstance(value, datetime) else value
        return out

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any]) -> UsageRecord:
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {"name": name}
        for key, value in data.items():
            if key not in known or key == "name":
                continue  # a newer field we do not know yet: ignore rather than fail
            if (key.endswith("_at")) and value is not None:
                value = parse_time(value)
            values[key] = value
        if "created_at" not in values or values["created_at"] is None:
            raise ValueError(f"record {name!r} has no created_at")
        if values.get("state", "active") not in STATES:
            raise ValueError(f"record {name!r} has an unknown state {values['state']!r}")
        return cls(**values)


def parse_time(value: str) -> datetime:
    """ISO-8601 to an aware UTC datetime (a naive time is taken as UTC)."""
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


@dataclass
class UsageData:
    """Everything in the sidecar: the records and what the curator last did."""

    records: dict[str, UsageRecord]
    last_run_at: datetime | None = None
    last_run: dict[str, Any] | None = None


class UsageStore:
    """Read and rewrite `skills/.usage.json`. Every mutation is load → change → atomic replace,
    under an exclusive lock (`.usage.json.lock`), so two runs counting uses at once lose none."""

    def __init__(self, path: Path, clock: Clock) -> None:
        self.path = path
        self.clock = clock

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the sidecar's lock for a load → change → save done by the caller (the curator's
        pass). Not re-entrant: `put`, `ensure` and the counters take it themselves."""
        with exclusive(self.path.with_name(self.path.name + ".lock")):
            yield

    # -- whole file ---------------------------------------------------------------------------
    def load(self) -> UsageData:
        if not self.path.exists():
            return UsageData(records={})
        try:
            raw = json_loads(read_text(self.path, limit=Limit.RECORD))
        except OSError as error:
            raise UsageError(f"cannot read {self.path}: {error.strerror or error}; fix or move it aside") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise UsageError(f"{self.path} is not readable JSON ({error}); fix or move it aside") from None
        if not isinstance(raw, dict):
            raise UsageError(f"{self.path} is not a usage file; fix or move it aside")
        version = raw.get("version")
        if version != VERSION:
            raise UsageError(f"{self.path} has version {version!r}; this arreio reads version {VERSION}")
        try:
            records = {name: UsageRecord.from_json(name, data) for name, data in (raw.get("skills") or {}).items()}
            curator = raw.get("curator") or {}
            last_at = curator.get("last_run_at")
            return UsageData(
                records=records, last_run_at=parse_time(last_at) if last_at else None, last_run=curator.get("last_run")
            )
        except (ValueError, TypeError, AttributeError) as error:
            raise UsageError(f"{self.path} has a bad record: {error}; fix or move it aside") from error

    def save(self, data: UsageData) -> None:
        payload = {
            "version": VERSION,
            "curator": {
                "last_run_at": iso_ms(data.last_run_at) if data.last_run_at else None,
                "last_run": data.last_run,
            },
            "skills": {name: data.records[name].to_json() for name in sorted(data.records)},
        }
        write_atomic(self.path, json.dumps(payload, indent=2, sort_keys=False) + "\n")

    # -- one record ---------------------------------------------------------------------------
    def get(self, name: str) -> UsageRecord | None:
        return self.load().records.get(name)

    def put(self, record: UsageRecord) -> None:
        with self.locked():
            data = self.load()
            data.records[record.name] = record
            self.save(data)

    def ensure(self, name: str, created_by: str) -> UsageRecord:
        """The record for `name`, created now (stamped by the clock) when missing."""
        with self.locked():
            data = self.load()
            record = data.records.get(name)
            if record is None:
                record = UsageRecord(name=name, created_at=self.clock.now(), created_by=created_by)
                data.records[name] = record
                self.save(data)
        return record

    def record_view(self, name: str, created_by: str) -> UsageRecord:
        return self._bump(name, created_by, "view_count", "last_viewed_at")

    def record_use(self, name: str, created_by: str) -> UsageRecord:
        return self._bump(name, created_by, "use_count", "last_used_at")

    def record_patch(self, name: str, created_by: str) -> UsageRecord:
        return self._bump(name, created_by, "patch_count", "last_patched_at")

    def _bump(self, name: str, created_by: str, counter: str, stamp: str) -> UsageRecord:
        now = self.clock.now()
        with self.locked():
            data = self.load()
            record = data.records.get(name) or UsageRecord(name=name, created_at=now, created_by=created_by)
            record = replace(record, created_by=created_by, **{counter: getattr(record, counter) + 1, stamp: now})
            data.records[name] = record
            self.save(data)
        return record

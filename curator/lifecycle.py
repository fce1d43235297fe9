"""The skill lifecycle as pure decisions: `transition(record, now, policy)`.

No I/O and no clock reads here; the curator passes `now` in and applies what comes back. Archive is
the terminal state (a move, never a delete), and the rules run in this order:

1. provenance gate: only `created_by: agent` skills are ever touched;
2. pinned skills never move;
3. idle time = now − last activity (newest `last_*_at`, else `created_at`);
4. idle past the archive cutoff → archived (from active or stale);
5. stale but idle less than the stale window (so it was used since) → reactivated to active;
6. active and idle past the stale cutoff → stale;
7. otherwise (e.g. a never-used skill younger than the stale window) → nothing.

A skill seen for the first time is not passed here at all: the curator seeds its record (`seed`) and
leaves it alone for that pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from arreio.curator.usage import State, UsageRecord

Kind = Literal["seed", "stale", "archive", "reactivate"]


@dataclass(frozen=True)
class Policy:
    """Lifecycle windows in days. Config key `curator.stale_days` / `curator.archive_days`."""

    stale_days: float = 30
    archive_days: float = 90

    def __post_init__(self) -> None:
        if self.stale_days <= 0 or self.archive_days <= 0:
            raise ValueError("stale_days and archive_days must be positive")
        if self.archive_days < self.stale_days:
            raise ValueError("archive_days must not be shorter than stale_days")

    @classmethod
    def from_mapping(cls, settings: Mapping[str, Any] | None) -> Policy:
        """Build from a config section such as `{"stale_days": 30, "archive_days": 90}`."""
        settings = settings or {}
        return cls(
            stale_days=float(settings.get("stale_days", cls.stale_days)),
            archive_days=float(settings.get("archive_days", cls.archive_days)),
        )

    def to_json(self) -> dict[str, float]:
        return {"stale_days": self.stale_days, "archive_days": self.archive_days}


@dataclass(frozen=True)
class Transition:
    """One decided change for one skill."""

    name: str
    kind: Kind
    from_state: State | None
    to_state: State
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "from": self.from_state,
            "to": self.to_state,
            "reason": self.reason,
        }


def idle_days(record: UsageRecord, now: datetime) -> float:
    """Days since the skill's last activity (negative if the clock moved back; treated as fresh)."""
    return (now - record.last_activity()) / timedelta(days=1)


def transition(record: UsageRecord, now: datetime, policy: Policy) -> Transition | None:
    """Decide what, if anything, happens to this skill at `now`. Pure."""
    if record.created_by != "agent":
        return None
    if record.pinned or record.state == "archived":
        return None
    idle = idle_days(record, now)
    if idle >= policy.archive_days:
        return Transition(
            record.name,
            "archive",
            record.state,
            "archived",
            f"no activity for {_days(idle)} (archive after {_days(policy.archive_days)})",
        )
    if record.state == "stale" and idle < policy.stale_days:
        return Transition(record.name, "reactivate", "stale", "active", f"used again {_days(idle)} ago")
    if record.state == "active" and idle >= policy.stale_days:
        return Transition(
            record.name,
            "stale",
            "active",
            "stale",
            f"no activity for {_days(idle)} (stale after {_days(policy.stale_days)})",
        )
    return None


def seed(name: str) -> Transition:
    """The change recorded when the curator first sees a skill: a record is created, nothing else."""
    return Transition(name, "seed", None, "active", "first seen; record created")


def _days(value: float) -> str:
    whole = int(value)
    return f"{whole} day" if whole == 1 else f"{whole} days"

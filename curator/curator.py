"""The curator: applies lifecycle transitions to the skills on disk.

`Curator.run()` loads the skills and their usage records, asks the pure `transition` what to do for
each, applies it (a state change in the sidecar, or a move into `skills/.archive/`), and reports.
It never deletes. Time comes only from the injected clock, which is shared with the usage store.

Side records go through callbacks so the core stays testable without other subsystems:
`on_record(payload)` (the CLI wires it to the `procedural` substore) and `on_audit(payload)` (a hook
for the audit journal; None until that exists). A dry run applies nothing and calls neither.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from arreio.curator.archive import archive_destination, archive_skill
from arreio.curator.lifecycle import Policy, Transition, seed, transition
from arreio.curator.skills import USAGE_FILE, Diagnostic, load_skills
from arreio.curator.usage import UsageData, UsageRecord, UsageStore
from arreio.engine.core.ids import iso_ms
from arreio.engine.core.ports import Clock

Callback = Callable[[dict[str, Any]], None]
COUNT_KEYS = {"stale": "marked_stale", "archive": "archived", "reactivate": "reactivated", "seed": "seeded"}


@dataclass(frozen=True)
class Change:
    """A transition and, for an archive, where the folder went (or would go, in a dry run)."""

    transition: Transition
    archived_to: Path | None = None

    def to_json(self, skills_dir: Path) -> dict[str, Any]:
        out = self.transition.to_json()
        if self.archived_to is not None:
            out["archived_to"] = self.archived_to.relative_to(skills_dir).as_posix()
        return out


@dataclass
class CuratorReport:
    """What one pass did (or, when `dry_run`, would do)."""

    at: datetime
    dry_run: bool
    first_run: bool
    checked: int
    policy: Policy
    skills_dir: Path
    changes: list[Change] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        counts = {"checked": self.checked, "marked_stale": 0, "archived": 0, "reactivated": 0, "seeded": 0}
        for change in self.changes:
            counts[COUNT_KEYS[change.transition.kind]] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "curator_run",
            "at": iso_ms(self.at),
            "dry_run": self.dry_run,
            "first_run": self.first_run,
            "policy": self.policy.to_json(),
            "counts": self.counts(),
            "changes": [change.to_json(self.skills_dir) for change in self.changes],
            "invalid_skills": [d.line() for d in self.diagnostics],
        }


@dataclass
class CuratorStatus:
    """The last run (if any) and what a run now would do."""

    last_run_at: datetime | None
    last_run: dict[str, Any] | None
    next_run: CuratorReport

    def to_json(self) -> dict[str, Any]:
        return {
            "last_run_at": iso_ms(self.last_run_at) if self.last_run_at else None,
            "last_run": self.last_run,
            "next_run": self.next_run.to_json(),
        }


class Curator:
    """Applies the lifecycle to `skills_dir`. Construct with the same clock the usage store uses."""

    def __init__(
        self,
        skills_dir: Path,
        clock: Clock,
        policy: Policy | None = None,
        *,
        on_record: Callback | None = None,
        on_audit: Callback | None = None,
    ) -> None:
        self.skills_dir = skills_dir
        self.clock = clock
        self.policy = policy or Policy()
        self.usage = UsageStore(skills_dir / USAGE_FILE, clock)
        self.on_record = on_record
        self.on_audit = on_audit

    def run(self, *, dry_run: bool = False) -> CuratorReport:
        """One pass. The first pass in a never-curated store only seeds records. The usage sidecar
        stays locked for the pass, so a run counting a skill's use meanwhile waits, and loses nothing.
        A dry run where there is no skills folder writes nothing at all (not even the lock, whose
        folders would have made a state folder without its `.gitignore`)."""
        if dry_run and not self.skills_dir.is_dir():
            return self._pass(dry_run)
        with self.usage.locked():
            return self._pass(dry_run)

    def _pass(self, dry_run: bool) -> CuratorReport:
        now = self.clock.now()
        data = self.usage.load()
        skills, diagnostics = load_skills(self.skills_dir)
        report = CuratorReport(
            at=now,
            dry_run=dry_run,
            first_run=data.last_run_at is None,
            checked=len(skills),
            policy=self.policy,
            skills_dir=self.skills_dir,
            diagnostics=diagnostics,
        )
        for skill in skills:
            record = data.records.get(skill.name)
            if record is None or record.state == "archived":
                # first sight — or a live folder whose record says archived (restored by hand, or a
                # new skill reusing the name): a fresh record, and nothing else on this pass
                data.records[skill.name] = UsageRecord(name=skill.name, created_at=now, created_by=skill.created_by)
                reason = "first seen; record created" if record is None else "back under skills/ after the archive"
                report.changes.append(Change(replace(seed(skill.name), reason=reason)))
                continue
            # the frontmatter is the source of truth for provenance: a stale record can never widen
            # what the curator may touch (and `skills adopt` edits the frontmatter, not the record)
            record = replace(record, created_by=skill.created_by)
            data.records[skill.name] = record
            if report.first_run:
                continue
            decided = transition(record, now, self.policy)
            if decided is not None:
                report.changes.append(self._apply(decided, record, data, now, dry_run))
        if not dry_run:
            data.last_run_at = now
            data.last_run = {"at": iso_ms(now), "counts": report.counts()}
            self.usage.save(data)
            payload = report.to_json()
            if self.on_record is not None:
                self.on_record(payload)
            if self.on_audit is not None:
                self.on_audit(payload)
        return report

    def status(self) -> CuratorStatus:
        data = self.usage.load()
        return CuratorStatus(data.last_run_at, data.last_run, self.run(dry_run=True))

    def _apply(self, decided: Transition, record: UsageRecord, data: UsageData, now: datetime, dry_run: bool) -> Change:
        if decided.kind != "archive":
            data.records[record.name] = replace(record, state=decided.to_state)
            return Change(decided)
        if dry_run:
            return Change(decided, archive_destination(self.skills_dir, record.name, now))
        destination = archive_skill(self.skills_dir, record.name, now)
        data.records[record.name] = replace(record, state="archived", archived_at=now)
        # persist right after the move so the sidecar never lags the folders by more than one skill
        self.usage.save(data)
        return Change(decided, destination)

"""The curator applied to real folders with a fixed clock: transitions, archive, dry run, callbacks."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from curator_fakes import T0, days_after_t0, write_skill

from arreio.curator.archive import restore_skill
from arreio.curator.curator import Curator
from arreio.curator.skills import USAGE_FILE
from arreio.curator.usage import UsageStore
from arreio.engine.core.errors import UsageError
from arreio.engine.providers.testing import FixedClock


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def seeded(skills_dir: Path, clock: FixedClock, *names: str, created_by: str = "agent") -> Curator:
    """Write the skills and run the first (seeding) pass at T0."""
    for name in names:
        write_skill(skills_dir, name, created_by=created_by)
    curator = Curator(skills_dir, clock)
    first = curator.run()
    assert first.counts()["seeded"] == len(names)
    return curator


def record(skills_dir: Path, clock: FixedClock, name: str):
    return UsageStore(skills_dir / USAGE_FILE, clock).get(name)


def test_first_sight_is_seeded_only(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "old-one")
    write_skill(skills_dir, "new-one")
    days_after_t0(clock, 400)
    report = curator.run()
    kinds = {change.transition.name: change.transition.kind for change in report.changes}
    assert kinds == {"new-one": "seed", "old-one": "archive"}
    assert (skills_dir / "new-one" / "SKILL.md").is_file()
    new = record(skills_dir, clock, "new-one")
    assert new.created_at == clock.now() and new.state == "active" and new.created_by == "agent"


def test_first_run_in_a_never_curated_store_only_seeds(skills_dir: Path, clock: FixedClock) -> None:
    write_skill(skills_dir, "ancient")
    store = UsageStore(skills_dir / USAGE_FILE, clock)
    store.ensure("ancient", "agent")  # telemetry exists from long ago, but no curator has ever run
    days_after_t0(clock, 500)
    report = Curator(skills_dir, clock).run()
    assert report.first_run
    assert report.counts() == {"checked": 1, "marked_stale": 0, "archived": 0, "reactivated": 0, "seeded": 0}
    assert (skills_dir / "ancient" / "SKILL.md").is_file()
    second = Curator(skills_dir, clock).run()
    assert not second.first_run and second.counts()["archived"] == 1


def test_idle_45_days_marks_stale_and_keeps_the_folder(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "idle")
    days_after_t0(clock, 45)
    report = curator.run()
    assert report.counts()["marked_stale"] == 1
    assert record(skills_dir, clock, "idle").state == "stale"
    assert (skills_dir / "idle" / "SKILL.md").is_file()


def test_idle_120_days_is_moved_into_the_archive(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "forgotten")
    before = (skills_dir / "forgotten" / "SKILL.md").read_bytes()
    days_after_t0(clock, 120)
    report = curator.run()
    assert report.counts()["archived"] == 1
    assert not (skills_dir / "forgotten").exists()
    assert (skills_dir / ".archive" / "forgotten" / "SKILL.md").read_bytes() == before
    assert report.changes[0].archived_to == skills_dir / ".archive" / "forgotten"
    rec = record(skills_dir, clock, "forgotten")
    assert rec.state == "archived" and rec.archived_at == clock.now()


def test_pinned_at_365_days_is_untouched(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "keeper")
    store = UsageStore(skills_dir / USAGE_FILE, clock)
    store.put(replace(store.get("keeper"), pinned=True))
    days_after_t0(clock, 365)
    report = curator.run()
    assert report.changes == []
    assert record(skills_dir, clock, "keeper").state == "active"
    assert (skills_dir / "keeper" / "SKILL.md").is_file()


def test_user_skill_at_365_days_is_untouched(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "handmade", created_by="user")
    days_after_t0(clock, 365)
    assert curator.run().changes == []
    assert (skills_dir / "handmade" / "SKILL.md").is_file()


def test_frontmatter_decides_provenance_not_a_stale_record(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "mine", created_by="user")
    store = UsageStore(skills_dir / USAGE_FILE, clock)
    store.put(replace(store.get("mine"), created_by="agent"))  # a record that lies
    days_after_t0(clock, 365)
    assert curator.run().changes == []
    assert (skills_dir / "mine").is_dir()


def test_stale_skill_used_today_is_reactivated(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "comeback")
    days_after_t0(clock, 45)
    curator.run()
    assert record(skills_dir, clock, "comeback").state == "stale"
    days_after_t0(clock, 60)
    UsageStore(skills_dir / USAGE_FILE, clock).record_use("comeback", "agent")
    report = curator.run()
    assert [c.transition.kind for c in report.changes] == ["reactivate"]
    assert record(skills_dir, clock, "comeback").state == "active"


def test_never_used_young_skill_is_left_alone(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "fresh")
    days_after_t0(clock, 20)
    assert curator.run().changes == []
    assert record(skills_dir, clock, "fresh").state == "active"


def test_archive_collision_gets_a_timestamp_suffix(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "again")
    days_after_t0(clock, 100)
    curator.run()
    write_skill(skills_dir, "again", body="second life\n")
    assert [c.transition.kind for c in curator.run().changes] == ["seed"]  # a new skill, a fresh record
    days_after_t0(clock, 200)
    report = curator.run()
    destination = report.changes[0].archived_to
    assert destination is not None and destination.name == "again.20260720-090000"
    archive = sorted(p.name for p in (skills_dir / ".archive").iterdir())
    assert archive == ["again", "again.20260720-090000"]
    assert "second life" in (destination / "SKILL.md").read_text()
    assert "Do the thing" in (skills_dir / ".archive" / "again" / "SKILL.md").read_text()


def test_restore_brings_the_folder_back_and_the_next_run_keeps_it(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "lost")
    days_after_t0(clock, 100)
    curator.run()
    name, destination = restore_skill(skills_dir, "lost")
    assert (name, destination) == ("lost", skills_dir / "lost")
    assert (skills_dir / "lost" / "SKILL.md").is_file()
    assert not (skills_dir / ".archive" / "lost").exists()
    report = curator.run()
    assert [c.transition.kind for c in report.changes] == ["seed"]
    assert (skills_dir / "lost" / "SKILL.md").is_file()


def test_restore_is_refused_when_the_name_is_taken(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "lost")
    days_after_t0(clock, 100)
    curator.run()
    write_skill(skills_dir, "lost", body="a new skill took the name\n")
    with pytest.raises(UsageError, match="already exists"):
        restore_skill(skills_dir, "lost")
    assert (skills_dir / ".archive" / "lost" / "SKILL.md").is_file()
    assert "a new skill took the name" in (skills_dir / "lost" / "SKILL.md").read_text()


def test_restore_of_an_unknown_entry_is_a_usage_error(skills_dir: Path) -> None:
    with pytest.raises(UsageError, match="no archived skill"):
        restore_skill(skills_dir, "ghost")


def test_dry_run_changes_nothing(skills_dir: Path, clock: FixedClock) -> None:
    seeded(skills_dir, clock, "a-stale", "b-archive", "c-user")
    write_skill(skills_dir, "c-user", created_by="user")
    UsageStore(skills_dir / USAGE_FILE, clock).record_use("a-stale", "agent")
    days_after_t0(clock, 95)
    UsageStore(skills_dir / USAGE_FILE, clock).record_view("a-stale", "agent")
    days_after_t0(clock, 130)
    write_skill(skills_dir, "d-new")
    records: list[dict[str, Any]] = []
    dry = Curator(skills_dir, clock, on_record=records.append, on_audit=records.append)
    before = snapshot(skills_dir.parent)
    report = dry.run(dry_run=True)
    assert snapshot(skills_dir.parent) == before
    assert records == []
    assert report.dry_run
    assert report.counts() == {"checked": 4, "marked_stale": 1, "archived": 1, "reactivated": 0, "seeded": 1}
    assert report.changes[1].archived_to == skills_dir / ".archive" / "b-archive"
    # and the real run then does exactly what the dry run said
    real = Curator(skills_dir, clock).run()
    assert [c.to_json(skills_dir) for c in real.changes] == [c.to_json(skills_dir) for c in report.changes]


def test_every_real_run_reports_to_record_and_audit_hooks(skills_dir: Path, clock: FixedClock) -> None:
    write_skill(skills_dir, "x")
    records: list[dict[str, Any]] = []
    audits: list[dict[str, Any]] = []
    curator = Curator(skills_dir, clock, on_record=records.append, on_audit=audits.append)
    curator.run()
    days_after_t0(clock, 120)
    curator.run()
    assert len(records) == 2 and records == audits
    assert records[0]["kind"] == "curator_run" and records[0]["first_run"] is True
    assert records[1]["counts"]["archived"] == 1
    assert records[1]["changes"] == [
        {
            "name": "x",
            "kind": "archive",
            "from": "active",
            "to": "archived",
            "reason": "no activity for 120 days (archive after 90 days)",
            "archived_to": ".archive/x",
        }
    ]
    json.dumps(records)  # payloads are plain JSON


def test_status_shows_last_run_and_the_next_plan_without_changing_anything(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "s")
    days_after_t0(clock, 40)
    before = snapshot(skills_dir)
    status = curator.status()
    assert snapshot(skills_dir) == before
    assert status.last_run_at == T0
    assert status.last_run == {
        "at": "2026-01-01T09:00:00.000Z",
        "counts": {"checked": 1, "marked_stale": 0, "archived": 0, "reactivated": 0, "seeded": 1},
    }
    assert [c.transition.kind for c in status.next_run.changes] == ["stale"]


def test_invalid_skills_are_skipped_and_reported(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "fine")
    broken = skills_dir / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("no frontmatter\n", encoding="utf-8")
    days_after_t0(clock, 400)
    report = curator.run()
    assert [d.code for d in report.diagnostics] == ["missing-frontmatter"]
    assert (broken / "SKILL.md").is_file()
    assert report.counts()["checked"] == 1


def test_a_folder_moved_back_by_hand_is_live_again(skills_dir: Path, clock: FixedClock) -> None:
    curator = seeded(skills_dir, clock, "boomerang")
    days_after_t0(clock, 100)
    curator.run()
    (skills_dir / ".archive" / "boomerang").rename(skills_dir / "boomerang")
    report = curator.run()
    assert [(c.transition.kind, c.transition.reason) for c in report.changes] == [
        ("seed", "back under skills/ after the archive")
    ]
    assert (skills_dir / "boomerang" / "SKILL.md").is_file()
    assert record(skills_dir, clock, "boomerang").state == "active"
    assert record(skills_dir, clock, "boomerang").created_at == clock.now()

"""The skill library as the user manages it: list, show, pin, unpin, restore, adopt.

This is what `arreio skills ...` calls; the CLI only parses and renders. Unknown names and refused
operations raise `UsageError` (exit 2) with a one-line message.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arreio.curator import frontmatter
from arreio.curator.archive import ArchivedSkill, find_archived, list_archived, restore_skill
from arreio.curator.skills import (
    SKILL_FILE,
    USAGE_FILE,
    Diagnostic,
    Skill,
    SkillInvalid,
    load_skills,
    name_problem,
    parse_skill_text,
    read_skill,
)
from arreio.curator.usage import UsageRecord, UsageStore
from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.errors import UsageError
from arreio.engine.core.ids import iso_ms
from arreio.engine.core.ports import Clock
from arreio.engine.core.regular_file import Limit, read_text


@dataclass(frozen=True)
class Entry:
    """One skill as listed: live (`skills/<name>`) or archived (`skills/.archive/<entry>`)."""

    name: str
    entry: str
    state: str
    skill: Skill | None
    record: UsageRecord | None
    folder: Path

    def to_json(self) -> dict[str, Any]:
        record = self.record
        return {
            "name": self.name,
            "entry": self.entry,
            "state": self.state,
            "created_by": self.skill.created_by if self.skill else None,
            "description": self.skill.description if self.skill else None,
            "pinned": bool(record and record.pinned),
            "use_count": record.use_count if record else 0,
            "view_count": record.view_count if record else 0,
            "patch_count": record.patch_count if record else 0,
            "last_activity": iso_ms(record.last_activity()) if record else None,
            "archived_at": iso_ms(record.archived_at) if record and record.archived_at else None,
            "path": str(self.folder),
        }


class SkillLibrary:
    """User-facing operations over one skills folder and its usage sidecar."""

    def __init__(self, skills_dir: Path, clock: Clock) -> None:
        self.skills_dir = skills_dir
        self.clock = clock
        self.usage = UsageStore(skills_dir / USAGE_FILE, clock)

    def entries(self) -> tuple[list[Entry], list[Diagnostic]]:
        """Live skills (active or stale) then archive entries; plus loader diagnostics."""
        records = self.usage.load().records
        skills, diagnostics = load_skills(self.skills_dir)
        out: list[Entry] = []
        for skill in skills:
            record = records.get(skill.name)
            state = record.state if record and record.state != "archived" else "active"
            out.append(Entry(skill.name, skill.name, state, skill, record, skill.folder))
        for archived in list_archived(self.skills_dir):
            out.append(self._archived_entry(archived, records))
        return out, diagnostics

    def get(self, key: str) -> Entry:
        """A live skill by name, else an archive entry by folder name or skill name."""
        live = self._live(key, required=False)
        if live is not None:
            record = self.usage.get(live.name)
            state = record.state if record and record.state != "archived" else "active"
            return Entry(live.name, live.name, state, live, record, live.folder)
        if not any(entry.name == key or entry.entry == key for entry in list_archived(self.skills_dir)):
            folder = self.skills_dir / key
            one_folder = key.strip() not in ("", ".", "..") and "/" not in key  # "" or "." is skills/ itself
            if one_folder and ((folder / "SKILL.md").is_file() or folder.is_dir()):  # there, but the loader refused it
                _, diagnostics = load_skills(self.skills_dir)
                why = next((d.message for d in diagnostics if d.path.parent == folder or d.path == folder), None)
                raise UsageError(
                    f"skill {key!r} is not loaded: {why or 'it is not a valid skill'} — fix "
                    f"{folder / 'SKILL.md'} (see `arreio skills list` for every problem)"
                )
            raise UsageError(f"no skill named {key!r}; see `arreio skills list --state all`")
        return self._archived_entry(find_archived(self.skills_dir, key), self.usage.load().records)

    def set_pinned(self, name: str, pinned: bool) -> UsageRecord:
        skill = self._live(name)
        record = self.usage.ensure(skill.name, skill.created_by)
        record = replace(record, pinned=pinned)
        self.usage.put(record)
        return record

    def restore(self, key: str) -> tuple[str, Path]:
        """Move an archived skill back; counts as activity so the next run leaves it be."""
        name, destination = restore_skill(self.skills_dir, key)
        now = self.clock.now()
        skill, _ = read_skill(destination)
        with self.usage.locked():
            data = self.usage.load()
            record = data.records.get(name) or UsageRecord(
                name=name, created_at=now, created_by=skill.created_by if skill else "user"
            )
            data.records[name] = replace(record, state="active", archived_at=None, last_restored_at=now)
            self.usage.save(data)
        return name, destination

    def adopt(self, name: str) -> bool:
        """Mark a user skill `created_by: agent` (keeping `adopted_from: user`). False if already agent's."""
        skill = self._live(name)
        if skill.created_by == "agent":
            return False
        if skill.created_by == "bundled":
            raise UsageError(f"skill {name!r} is bundled with arreio; only user skills can be adopted")
        try:
            text = read_text(skill.path, limit=Limit.SKILL)
        except (OSError, UnicodeDecodeError) as error:  # changed since it was loaded
            raise UsageError(f"cannot adopt {name!r}: {getattr(error, 'strerror', None) or error}") from None
        updated = _restamp(text, {"created_by": "agent", "adopted_from": skill.created_by})
        try:
            parse_skill_text(updated, skill.folder, expected_name=skill.name)
        except SkillInvalid as error:  # pragma: no cover - the edit only touches two keys
            raise UsageError(f"cannot adopt {name!r}: {error.message}") from None
        write_atomic(skill.path, updated)
        record = self.usage.ensure(skill.name, "agent")
        self.usage.put(replace(record, created_by="agent"))
        return True

    def _live(self, name: str, *, required: bool = True) -> Skill | None:
        folder = self.skills_dir / name
        if name_problem(name) is None and (folder / SKILL_FILE).is_file():
            skill, diagnostic = read_skill(folder, expected_name=name)
            if skill is not None:
                return skill
            if required:
                assert diagnostic is not None
                raise UsageError(f"skill {name!r} is invalid: {diagnostic.message}")
        if not required:
            return None
        if any(entry.name == name or entry.entry == name for entry in list_archived(self.skills_dir)):
            raise UsageError(f"skill {name!r} is archived; restore it first with `arreio skills restore {name}`")
        raise UsageError(f"no skill named {name!r}; see `arreio skills list`")

    @staticmethod
    def _archived_entry(archived: ArchivedSkill, records: dict[str, UsageRecord]) -> Entry:
        record = records.get(archived.name)
        if record is not None and record.state != "archived":
            record = None  # that record belongs to a live skill of the same name
        return Entry(archived.name, archived.entry, "archived", archived.skill, record, archived.folder)


def _restamp(text: str, changes: dict[str, str]) -> str:
    """Set keys in the frontmatter with a round-trip edit, so the user's comments and order survive."""
    from arreio.engine.core.yaml_file import yaml_loader

    raw, body = frontmatter.split(text)
    yaml = yaml_loader("rt")  # round-trip: keeps comments and key order
    yaml.width = 4096
    data = yaml.load(raw)
    for key, value in changes.items():
        data[key] = value
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    return f"{frontmatter.FENCE}\n{buffer.getvalue()}{frontmatter.FENCE}\n{body}"

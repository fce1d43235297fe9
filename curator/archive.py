"""The archive: `skills/.archive/<name>` — where the curator moves skills instead of deleting them.

Archiving is one `os.rename` inside the skills folder (same filesystem, so atomic). When the archive
already holds that name, the folder gets a timestamp suffix (`<name>.20260627-160000`, then `-2`,
`-3`, ... within the same second); a dot never appears in a skill name, so the suffix is unambiguous.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from arreio.curator.skills import ARCHIVE_DIR, SKILL_FILE, Skill, read_skill
from arreio.engine.core.errors import UsageError


@dataclass(frozen=True)
class ArchivedSkill:
    """One folder in the archive. `skill` is None when its SKILL.md no longer parses."""

    folder: Path
    name: str  # the skill's own name (frontmatter, else the folder name without its suffix)
    skill: Skill | None

    @property
    def entry(self) -> str:
        """The archive folder name: what `arreio skills restore` takes."""
        return self.folder.name


def archive_root(skills_dir: Path) -> Path:
    return skills_dir / ARCHIVE_DIR


def archive_destination(skills_dir: Path, name: str, now: datetime) -> Path:
    """Where `name` would land in the archive at `now` (a free path; nothing is created)."""
    root = archive_root(skills_dir)
    candidate = root / name
    if not candidate.exists():
        return candidate
    stamp = now.strftime("%Y%m%d-%H%M%S")
    candidate = root / f"{name}.{stamp}"
    counter = 2
    while candidate.exists():
        candidate = root / f"{name}.{stamp}-{counter}"
        counter += 1
    return candidate


def archive_skill(skills_dir: Path, name: str, now: datetime) -> Path:
    """Move `skills/<name>` into the archive and return where it went. Never deletes anything."""
    source = skills_dir / name
    if not (source / SKILL_FILE).is_file():
        raise UsageError(f"no skill folder {source} to archive")
    destination = archive_destination(skills_dir, name, now)
    destination.parent.mkdir(parents=True, exist_ok=True)
    os.rename(source, destination)
    return destination


def list_archived(skills_dir: Path) -> list[ArchivedSkill]:
    """Every archive entry, sorted by folder name (so a name's suffixed copies follow it)."""
    root = archive_root(skills_dir)
    if not root.is_dir():
        return []
    entries: list[ArchivedSkill] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        skill, _ = read_skill(folder)
        name = skill.name if skill is not None else folder.name.split(".", 1)[0]
        entries.append(ArchivedSkill(folder=folder, name=name, skill=skill))
    return entries


def find_archived(skills_dir: Path, key: str) -> ArchivedSkill:
    """The archive entry named `key` (a folder name), or the only entry for skill `key`."""
    entries = list_archived(skills_dir)
    for entry in entries:
        if entry.entry == key:
            return entry
    matches = [entry for entry in entries if entry.name == key]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(entry.entry for entry in matches)
        raise UsageError(f"the archive holds several copies of {key!r} ({names}); name the one to restore")
    raise UsageError(f"no archived skill {key!r}; see `arreio skills list --state archived`")


def restore_skill(skills_dir: Path, key: str) -> tuple[str, Path]:
    """Move an archive entry back to `skills/<name>`. Refused (UsageError) if that name is taken."""
    entry = find_archived(skills_dir, key)
    destination = skills_dir / entry.name
    if destination.exists():
        raise UsageError(
            f"cannot restore {entry.entry!r}: a skill named {entry.name!r} already exists; archive or rename it first"
        )
    os.rename(entry.folder, destination)
    return entry.name, destination

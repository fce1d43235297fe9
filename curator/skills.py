"""Skills on disk: the model and the loader.

A skill is a folder `skills/<name>/SKILL.md` (frontmatter + markdown body) with optional support
files under `references/`, `templates/`, `scripts/` and `assets/`. The loader never raises on one bad skill: it
returns `(skills, diagnostics)` so one broken folder cannot hide the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from arreio.curator import frontmatter
from arreio.engine.core.regular_file import Limit, TooLarge, read_text
from arreio.memory.scan import ScanFinding, scan_text

SKILL_FILE = "SKILL.md"
ARCHIVE_DIR = ".archive"
USAGE_FILE = ".usage.json"
SUPPORT_DIRS = ("references", "templates", "scripts", "assets")
MAX_NAME = 64
MAX_DESCRIPTION = 1_024
MAX_BODY = 100_000
PROVENANCES = ("agent", "user", "bundled")
# lowercase letters, digits, '-' and '_'; no dots, so an archive suffix (`name.<stamp>`) is unambiguous
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")

CreatedBy = Literal["agent", "user", "bundled"]


@dataclass(frozen=True)
class Diagnostic:
    """Why one skill folder was not loaded. `code` is stable (tests and `--json` use it)."""

    path: Path
    code: str
    message: str

    def line(self) -> str:
        return f"{self.path}: {self.message} [{self.code}]"


@dataclass(frozen=True)
class Skill:
    """A valid skill as found on disk. `meta` keeps every frontmatter key, known or not."""

    name: str
    description: str
    created_by: CreatedBy
    body: str
    folder: Path
    tags: tuple[str, ...] = ()
    version: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.folder / SKILL_FILE

    def support_files(self) -> list[str]:
        """Support files as POSIX paths relative to the skill folder, sorted."""
        found: list[str] = []
        for sub in SUPPORT_DIRS:
            base = self.folder / sub
            if base.is_dir():
                found.extend(p.relative_to(self.folder).as_posix() for p in base.rglob("*") if p.is_file())
        return sorted(found)


class SkillInvalid(ValueError):
    """Raised by `parse_skill_text`; carries the diagnostic code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def name_problem(name: str) -> str | None:
    """Why `name` is not a valid skill name, or None when it is."""
    if not name:
        return "the name is empty"
    if len(name) > MAX_NAME:
        return f"the name is {len(name)} characters; the limit is {MAX_NAME}"
    if not NAME_RE.match(name):
        return f"the name {name!r} must be lowercase letters, digits, '-' or '_'"
    return None


def parse_skill_text(text: str, folder: Path, *, expected_name: str | None = None) -> Skill:
    """Validate a SKILL.md text and build the Skill. Raises SkillInvalid with a diagnostic code."""
    try:
        meta, body = frontmatter.parse(text)
    except frontmatter.FrontmatterError as error:
        raise SkillInvalid(error.code, str(error)) from error
    name = meta.get("name")
    if name is None or name == "":
        raise SkillInvalid("missing-name", "frontmatter has no 'name'")
    if not isinstance(name, str):
        raise SkillInvalid("invalid-name", "'name' must be a string")
    problem = name_problem(name)
    if problem:
        raise SkillInvalid("invalid-name", problem)
    if expected_name is not None and name != expected_name:
        raise SkillInvalid("name-mismatch", f"frontmatter name {name!r} does not match its folder {expected_name!r}")
    description = meta.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        raise SkillInvalid("missing-description", "frontmatter has no 'description'")
    if not isinstance(description, str):
        raise SkillInvalid("invalid-description", "'description' must be a string")
    if len(description) > MAX_DESCRIPTION:
        raise SkillInvalid(
            "description-too-long", f"'description' is {len(description)} characters; the limit is {MAX_DESCRIPTION}"
        )
    # a hand-written skill without provenance is the user's: the curator must never touch it
    created_by = meta.get("created_by", "user")
    if created_by not in PROVENANCES:
        raise SkillInvalid("invalid-created-by", f"'created_by' must be one of {', '.join(PROVENANCES)}")
    tags = meta.get("tags") or []
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, list) or not all(isinstance(tag, (str, int, float)) for tag in tags):
        raise SkillInvalid("invalid-tags", "'tags' must be a list of strings")
    version = meta.get("version")
    if len(body) > MAX_BODY:
        raise SkillInvalid("body-too-long", f"the body is {len(body)} characters; the limit is {MAX_BODY}")
    return Skill(
        name=name,
        description=description.strip(),
        created_by=created_by,
        body=body,
        folder=folder,
        tags=tuple(str(tag) for tag in tags),
        version=None if version is None else str(version),
        meta=meta,
    )


def read_skill(folder: Path, *, expected_name: str | None = None) -> tuple[Skill | None, Diagnostic | None]:
    """Load one skill folder: (skill, None) when valid, (None, diagnostic) otherwise."""
    path = folder / SKILL_FILE
    if not path.exists() and not path.is_symlink():
        return None, Diagnostic(path, "missing-skill-file", f"no {SKILL_FILE} in the skill folder")
    try:
        text = read_text(path, limit=Limit.SKILL)
    except (OSError, UnicodeDecodeError) as error:
        return None, Diagnostic(
            path, "unreadable", f"cannot read {SKILL_FILE}: {getattr(error, 'strerror', None) or error}"
        )
    try:
        return parse_skill_text(text, folder, expected_name=expected_name), None
    except SkillInvalid as error:
        return None, Diagnostic(path, error.code, error.message)


def skill_folders(root: Path) -> list[Path]:
    """Skill folders directly under `root`, sorted; dot-folders (the archive) are not skills."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def load_skills(roots: Path | Iterable[Path]) -> tuple[list[Skill], list[Diagnostic]]:
    """Load every skill under the given root folders (earlier roots win on a duplicate name).

    Never raises for a bad skill; each problem is one `Diagnostic`. Skills come back sorted by name.
    """
    roots = [roots] if isinstance(roots, Path) else list(roots)
    skills: dict[str, Skill] = {}
    diagnostics: list[Diagnostic] = []
    for root in roots:
        for folder in skill_folders(root):
            skill, diagnostic = read_skill(folder, expected_name=folder.name)
            if diagnostic is not None:
                diagnostics.append(diagnostic)
                continue
            assert skill is not None
            if skill.name in skills:
                first = skills[skill.name].path
                diagnostics.append(
                    Diagnostic(skill.path, "duplicate-name", f"skill {skill.name!r} is already defined in {first}")
                )
                continue
            skills[skill.name] = skill
    return sorted(skills.values(), key=lambda s: s.name), diagnostics


@dataclass(frozen=True)
class SkillScan:
    """Why a skill failed the security scan: which part (`name and description` or `body`) and the finding."""

    part: str
    finding: ScanFinding

    def describe(self, *, quote: bool = True) -> str:
        """Why, in one line. `quote=False` names the part, the category and the rule but never the
        matched text: a refusal the model reads must not hand it the words that were refused."""
        if not quote:
            return (
                f"its {self.part} failed the security scan ({self.finding.category.replace('_', ' ')}, "
                f"rule {self.finding.pattern!r})"
            )
        return f"its {self.part} failed the security scan: {self.finding.describe()}"


def scan_skill(name: str, description: str, body: str) -> SkillScan | None:
    """The security scan over what a skill puts in front of the model, or None when it passes.

    The name and description are read as one line, as the skills index shows them, with the name's
    dashes and the colon after it read as spaces, so an instruction split between the two is read
    whole; the body is what `skill_view` hands the model. A skill is text that enters every later
    session, exactly like a memory entry, so it passes the same scan (arreio.memory.scan)."""
    line = f"{re.sub(r'[-_]+', ' ', name)} {description}"
    finding = scan_text(line)
    if finding is not None:
        return SkillScan("name and description", finding)
    finding = scan_text(body)
    if finding is not None:
        return SkillScan("body", finding)
    return None


_SCANNED: dict[tuple[Path, int, int], SkillScan | None] = {}


def scan_skill_file(skill: Skill) -> SkillScan | None:
    """`scan_skill` for a skill on disk, remembered for this process by file identity (path, size,
    mtime), so a chat that renders the index for every message scans an unchanged library once."""
    try:
        stat = skill.path.stat()
        key = (skill.path, stat.st_size, stat.st_mtime_ns)
    except OSError:
        return scan_skill(skill.name, skill.description, skill.body)
    if key not in _SCANNED:
        if len(_SCANNED) > 1024:
            _SCANNED.clear()
        _SCANNED[key] = scan_skill(skill.name, skill.description, skill.body)
    return _SCANNED[key]


MAX_SCANNED_FILE = 1_000_000  # characters; a longer file of a skill is not scanned, so not shown or listed
_FILES: dict[tuple[Path, int, int], ScanFinding | None] = {}


def scan_skill_text(relative: str, text: str) -> SkillScan | None:
    """The scan over one file of a skill other than SKILL.md, as it would be stored or shown: its
    name (the model reads the list of files) and its text — a script, a reference, a template, an
    asset (the same scan as memory: arreio.memory.scan)."""
    if len(text) > MAX_SCANNED_FILE:
        return SkillScan(relative, ScanFinding("unscannable", f"longer than {MAX_SCANNED_FILE:,} characters", ""))
    finding = scan_text(relative) or scan_text(text)
    return None if finding is None else SkillScan(relative, finding)


def scan_skill_folder(skill: Skill) -> SkillScan | None:
    """Every file of a skill on disk, before any of it is shown: SKILL.md (`scan_skill_file`) and
    every other file in its folder — support files, and one placed there by hand or by an older run —
    each remembered by identity (path, size, mtime). A file that is not UTF-8 text is never shown
    (`skill_view` refuses it) and is passed over, except under scripts/: code nobody can read is not
    run unread. Symlinks are not followed (`skill_view` refuses one that leads outside)."""
    blocked = scan_skill_file(skill)
    if blocked is not None:
        return blocked
    files = sorted(p for p in skill.folder.rglob("*") if p.is_file() and not p.is_symlink() and p != skill.path)
    for path in files:
        relative = path.relative_to(skill.folder).as_posix()
        try:
            stat = path.stat()
        except OSError:
            continue
        key = (path, stat.st_size, stat.st_mtime_ns)
        if key not in _FILES:
            if len(_FILES) > 4096:
                _FILES.clear()
            _FILES[key] = _scan_file(path, relative)
        if _FILES[key] is not None:
            return SkillScan(relative, _FILES[key])
    return None


def _scan_file(path: Path, relative: str) -> ScanFinding | None:
    try:  # read no further than could be scanned: a 2 GB file is not read to be found too long
        text = read_text(path, limit=4 * MAX_SCANNED_FILE)
    except TooLarge:
        return ScanFinding("unscannable", f"longer than {MAX_SCANNED_FILE:,} characters", "")
    except UnicodeDecodeError:
        return ScanFinding("unscannable", "not UTF-8 text", "") if relative.startswith("scripts/") else None
    except OSError:
        return ScanFinding("unscannable", "unreadable", "")
    found = scan_skill_text(relative, text)
    return None if found is None else found.finding


def skills_root(state_dir: Path) -> Path:
    """`<state>/skills`: where active (and stale) skills live."""
    return state_dir / "skills"

"""Model-facing tools: `skill_view` (load a skill on demand) and `skill_manage` (the agent's own skills).

Every file of a skill passes the security scan (the memory scan, curator/skills.py) before
`skill_manage` stores it and again, with every other file of the skill, before `skill_view` shows any
of it; a refusal names the file, the category and the rule, never the text it refused.

`skill_manage` writes only skills whose frontmatter says `created_by: agent`, and stamps that on
everything it writes; user and bundled skills are read-only to it. Every view, use and patch is
recorded in the usage telemetry through the same clock the curator uses.

Telemetry meaning: `skill_view(name)` (the procedure itself) is a *view*; `skill_view(name, file)`
(drawing on a template, script or reference to carry the procedure out) is a *use*; any write
through `skill_manage` other than `create` is a *patch*.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from arreio.curator import frontmatter
from arreio.curator.archive import list_archived
from arreio.curator.skills import (
    SKILL_FILE,
    SUPPORT_DIRS,
    USAGE_FILE,
    Skill,
    SkillInvalid,
    name_problem,
    parse_skill_text,
    read_skill,
    scan_skill,
    scan_skill_folder,
    scan_skill_text,
    skills_root,
)
from arreio.curator.usage import UsageRecord, UsageStore
from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.errors import UsageError
from arreio.engine.core.ports import Clock
from arreio.engine.core.regular_file import Limit, read_text
from arreio.engine.tools.base import Tool, ToolError, ToolResult
from arreio.engine.tools.run_context import RunContext

MAX_VIEW_CHARS = 100_000


class SkillViewInput(BaseModel):
    name: str
    file: str | None = None


class SkillManageInput(BaseModel):
    action: Literal["create", "patch", "write_file"]
    name: str = Field(description="Lowercase letters, digits, - or _.")
    description: str | None = None
    body: str | None = None
    tags: list[str] | None = None
    old_string: str | None = None
    new_string: str | None = None
    file: str | None = None
    content: str | None = None


class _SkillTool(Tool):
    def __init__(self, skills_dir: Path, usage: UsageStore, clock: Clock) -> None:
        self.skills_dir = skills_dir
        self.usage = usage
        self.clock = clock

    def _track(self, method: str, name: str, created_by: str) -> str:
        """Record telemetry; a broken sidecar must not block the skill itself, so it becomes a note."""
        try:
            getattr(self.usage, method)(name, created_by)
        except UsageError as error:
            return f"\n[usage not recorded: {error.message}]"
        return ""

    def _validate_args(self, args: Any) -> Any:
        return args if isinstance(args, self.input_model) else self.input_model.model_validate(args)

    def _load(self, name: str) -> Skill:
        problem = name_problem(name)
        if problem:
            raise ToolError(f"unknown skill {name!r}: {problem}")
        folder = self.skills_dir / name
        if not folder.is_dir():
            if any(entry.name == name for entry in list_archived(self.skills_dir)):
                raise ToolError(f"skill {name!r} is archived; a user can bring it back with `arreio skills restore`")
            raise ToolError(f"no skill named {name!r}; the skills index lists the ones that exist")
        skill, diagnostic = read_skill(folder, expected_name=name)
        if skill is None:
            assert diagnostic is not None
            raise ToolError(f"skill {name!r} cannot be loaded: {diagnostic.message}")
        return skill


class SkillViewTool(_SkillTool):
    name: ClassVar[str] = "skill_view"
    description: ClassVar[str] = "Load a skill (SKILL.md, or one of its files) before you follow it."
    input_model: ClassVar[type[BaseModel]] = SkillViewInput
    repeat = "per_target"

    async def execute(self, args: Any, ctx: RunContext) -> ToolResult:
        args = self._validate_args(args)
        skill = self._load(args.name)
        # Every file of the skill, not only the one asked for: SKILL.md may send the agent to run a
        # script it never views. Nothing of it reaches the model — not even the words that failed.
        blocked = scan_skill_folder(skill)
        if blocked is not None:  # the user can still read it
            raise ToolError(
                f"skill {skill.name!r} is not shown: {blocked.describe(quote=False)}. Do not use it or run its "
                f"files. It stays on disk; a user can inspect it with `arreio skills show {skill.name}`"
            )
        if args.file is None or args.file == SKILL_FILE:
            text = _read(skill.path, SKILL_FILE)
            support = skill.support_files()
            note = self._track("record_view", skill.name, skill.created_by)
            if support:
                text += "\n\nSupport files (skill_view with file=...):\n" + "\n".join(f"- {f}" for f in support)
            return ToolResult(_cap(text) + note)
        path = _inside(skill.folder, args.file, writable=False)
        if not path.is_file():
            raise ToolError(
                f"skill {skill.name!r} has no file {args.file!r}; files: {', '.join(skill.support_files()) or 'none'}"
            )
        text = _read(path, args.file)
        note = self._track("record_use", skill.name, skill.created_by)
        return ToolResult(_cap(text) + note)


class SkillManageTool(_SkillTool):
    name: ClassVar[str] = "skill_manage"
    description: ClassVar[str] = (
        "Save a reusable procedure as your own skill. create: description (when to use it), body; "
        "patch: old_string to new_string in file (default SKILL.md); write_file: file, content."
    )
    input_model: ClassVar[type[BaseModel]] = SkillManageInput
    repeat = "few"

    async def execute(self, args: Any, ctx: RunContext) -> ToolResult:
        args = self._validate_args(args)
        if args.action == "create":
            return self._create(args)
        skill = self._load(args.name)
        if skill.created_by != "agent":
            raise ToolError(
                f"skill {skill.name!r} was written by the {skill.created_by}; skill_manage changes only "
                "skills created_by: agent — create a new skill instead"
            )
        if args.action == "patch":
            return self._patch(skill, args)
        return self._write_file(skill, args)

    def _create(self, args: SkillManageInput) -> ToolResult:
        problem = name_problem(args.name)
        if problem:
            raise ToolError(f"cannot create skill: {problem}")
        if not args.description or args.body is None:
            raise ToolError("create needs a description and a body")
        folder = self.skills_dir / args.name
        if folder.exists():
            raise ToolError(f"skill {args.name!r} already exists; use patch or write_file to change it")
        meta: dict[str, Any] = {"name": args.name, "description": args.description.strip(), "created_by": "agent"}
        if args.tags:
            meta["tags"] = list(args.tags)
        text = frontmatter.render(meta, args.body)
        _check(text, folder, args.name)
        write_atomic(folder / SKILL_FILE, text)
        # a fresh record: a same-named skill in the archive keeps its folder but not its telemetry
        note = ""
        try:
            self.usage.put(UsageRecord(name=args.name, created_at=self.clock.now(), created_by="agent"))
        except UsageError as error:
            note = f"\n[usage not recorded: {error.message}]"
        return ToolResult(f"created skill {args.name!r} at {folder / SKILL_FILE}{note}")

    def _patch(self, skill: Skill, args: SkillManageInput) -> ToolResult:
        if not args.old_string or args.new_string is None:
            raise ToolError("patch needs old_string (non-empty) and new_string")
        path = _inside(skill.folder, args.file or SKILL_FILE, writable=True)
        if not path.is_file():
            raise ToolError(f"skill {skill.name!r} has no file {args.file!r}")
        text = _read(path, args.file or SKILL_FILE)
        count = text.count(args.old_string)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times; include more context"
            raise ToolError(f"old_string {where} in {path.relative_to(skill.folder).as_posix()}")
        updated = text.replace(args.old_string, args.new_string, 1)
        if path.name == SKILL_FILE and path.parent == skill.folder:
            patched = _check(updated, skill.folder, skill.name)
            if patched.created_by != "agent":
                raise ToolError("a patch may not change created_by; skill_manage only keeps agent skills")
        else:
            _check_file(path.relative_to(skill.folder).as_posix(), updated)
        write_atomic(path, updated)
        note = self._track("record_patch", skill.name, "agent")
        return ToolResult(f"patched {skill.name}/{path.relative_to(skill.folder).as_posix()}{note}")

    def _write_file(self, skill: Skill, args: SkillManageInput) -> ToolResult:
        if not args.file or args.content is None:
            raise ToolError("write_file needs file and content")
        path = _inside(skill.folder, args.file, writable=True)
        content = args.content
        if path.name == SKILL_FILE and path.parent == skill.folder:
            try:
                meta, body = frontmatter.parse(content)
            except frontmatter.FrontmatterError as error:
                raise ToolError(f"SKILL.md rejected: {error}") from None
            meta["created_by"] = "agent"  # stamped, whatever the content claimed
            content = frontmatter.render(meta, body)
            _check(content, skill.folder, skill.name)
        else:
            _check_file(path.relative_to(skill.folder).as_posix(), content)
        write_atomic(path, content)
        note = self._track("record_patch", skill.name, "agent")
        return ToolResult(f"wrote {skill.name}/{path.relative_to(skill.folder).as_posix()}{note}")


def skill_tools(state_dir: Path, clock: Clock) -> list[Tool]:
    """The skill tools over `<state_dir>/skills`, sharing one usage store and clock."""
    skills_dir = skills_root(state_dir)
    usage = UsageStore(skills_dir / USAGE_FILE, clock)
    return [SkillViewTool(skills_dir, usage, clock), SkillManageTool(skills_dir, usage, clock)]


def _check(text: str, folder: Path, name: str) -> Skill:
    """The skill `text` would be, or `ToolError` when it is invalid or fails the security scan
    (every skill the agent writes enters the skills index of every later session)."""
    try:
        skill = parse_skill_text(text, folder, expected_name=name)
    except SkillInvalid as error:
        raise ToolError(f"SKILL.md rejected: {error.message}") from None
    blocked = scan_skill(skill.name, skill.description, skill.body)
    if blocked is not None:
        raise ToolError(
            f"SKILL.md refused: {blocked.describe(quote=False)}. Skills reach every future system prompt, so "
            "instructions aimed at the agent, secrets and hidden characters are never stored; nothing was written."
        )
    return skill


def _check_file(relative: str, text: str) -> None:
    """`ToolError` when a script, reference, template or asset fails the security scan: later
    sessions read and run a skill's files as they read its body."""
    blocked = scan_skill_text(relative, text)
    if blocked is not None:
        raise ToolError(
            f"{relative} refused: {blocked.describe(quote=False)}. A skill's files are read and run by every "
            "later session, so they pass the same scan as its body; nothing was written."
        )


def _inside(folder: Path, file: str, *, writable: bool) -> Path:
    """Resolve `file` inside the skill folder; refuse escapes (`..`, absolute paths, symlinks out)."""
    relative = PurePosixPath(file.replace("\\", "/"))
    if not file or relative.is_absolute() or ".." in relative.parts:
        raise ToolError(f"file {file!r} must be a relative path inside the skill")
    if writable and relative.as_posix() != SKILL_FILE and relative.parts[0] not in SUPPORT_DIRS:
        raise ToolError(f"file {file!r} must be SKILL.md or under {', '.join(d + '/' for d in SUPPORT_DIRS)}")
    path = folder / relative
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        raise ToolError(f"file {file!r} leads outside the skill") from None
    return path


def _read(path: Path, shown: str) -> str:
    """A skill's file as text, at most `Limit.SKILL` bytes (a support file too); a problem is the tool's error."""
    try:
        return read_text(path, limit=Limit.SKILL)
    except UnicodeDecodeError:
        raise ToolError(f"{shown!r} is not a text file") from None
    except OSError as error:
        raise ToolError(f"cannot read {shown!r}: {error.strerror or error}") from None


def _cap(text: str) -> str:
    if len(text) <= MAX_VIEW_CHARS:
        return text
    return text[:MAX_VIEW_CHARS] + f"\n[cut: showed {MAX_VIEW_CHARS} of {len(text)} characters]"

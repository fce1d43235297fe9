"""The suite file: tasks to run as a batch, validated like plans (file:line errors, did-you-mean).

```yaml
version: 1
defaults: {model: anthropic/claude-sonnet-4-5, max_steps: 40, timeout_s: 900}
tasks:
  - id: fix-parser
    goal: "Make tests/test_parser.py pass without changing the tests."   # or goal_file:
    workdir: tasks/fix-parser        # copied into an isolated directory per task and attempt
    setup: "pip install -e ."         # optional, runs in the copy before the agent
    gates: [{kind: command, command: "pytest -q tests/test_parser.py"}]
    script: tasks/fix-parser/replies.yaml   # or cassette:, or nothing (the model decides)
```
Paths are relative to the suite file. A task's own key wins over `defaults`; a task with `script:`
or `cassette:` ignores the default model (a script plays offline replies, a cassette serves the
recorded model). Every problem is one `UsageError` naming the file, the line and what is wrong.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core.errors import UsageError
from arreio.engine.core.regular_file import Limit, read_text
from arreio.engine.core.regular_file import kind as file_kind
from arreio.engine.core.yaml_file import line_of, read_yaml, validated
from arreio.engine.judgement.gate_spec import GateSpec

SUITE_VERSION = 1


class Defaults(BaseModel):
    """What every task gets unless it says otherwise."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    max_steps: int | None = Field(None, ge=1)
    timeout_s: float = Field(900.0, gt=0)
    setup: str | None = None
    setup_timeout_s: float = Field(600.0, gt=0)
    gates: list[GateSpec] | None = None
    tools: list[str] | None = None


class TaskEntry(BaseModel):
    """One task as written in the file."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    goal: str | None = Field(None, min_length=1)
    goal_file: str | None = None
    workdir: str | None = None
    setup: str | None = None
    setup_timeout_s: float | None = Field(None, gt=0)
    gates: list[GateSpec] | None = None
    script: str | None = None
    cassette: str | None = None
    model: str | None = None
    max_steps: int | None = Field(None, ge=1)
    timeout_s: float | None = Field(None, gt=0)
    tools: list[str] | None = None


class SuiteFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = SUITE_VERSION
    defaults: Defaults = Field(default_factory=Defaults)
    tasks: list[TaskEntry] = Field(min_length=1)


@dataclass(frozen=True)
class Task:
    """One task, resolved: defaults applied, paths absolute. Picklable (it travels to workers)."""

    id: str
    goal: str
    workdir: Path | None
    setup: str | None
    setup_timeout_s: float
    gates: tuple[dict[str, Any], ...]  # GateSpec dumps: a plan file is written from them per attempt
    script: Path | None
    cassette: Path | None
    model: str | None
    max_steps: int | None
    timeout_s: float
    tools: tuple[str, ...] | None


@dataclass(frozen=True)
class Suite:
    path: Path
    tasks: tuple[Task, ...]

    def select(self, pattern: str | None) -> list[Task]:
        """`--filter GLOB` on task ids (a comma separates several globs)."""
        if not pattern:
            return list(self.tasks)
        globs = [g.strip() for g in pattern.split(",") if g.strip()]
        return [t for t in self.tasks if any(fnmatchcase(t.id, g) for g in globs)]


def _where(path: Path, data: Any, loc: tuple[Any, ...]) -> str:
    line = line_of(data, loc) or line_of(data, loc[:-1])
    return f"{path}{f':{line}' if line else ''}"


def load_suite(path: Path) -> Suite:
    """Read and validate a suite file; every problem is one UsageError (exit 2)."""
    data = read_yaml(path, error=UsageError, what="suite", typ="rt", limit=Limit.PLAN)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a suite is a mapping with `tasks:` (and optional `defaults:`)")
    parsed = validated(SuiteFile, data, path, error=UsageError)
    if parsed.version > SUITE_VERSION:
        raise UsageError(
            f"{path}: suite version {parsed.version} is newer than this arreio understands ({SUITE_VERSION})"
        )
    base = path.resolve().parent
    seen: set[str] = set()
    tasks = []
    for i, entry in enumerate(parsed.tasks):
        if entry.id in seen:
            raise UsageError(f"{_where(path, data, ('tasks', i, 'id'))}: duplicate task id '{entry.id}'")
        seen.add(entry.id)
        tasks.append(_resolve(entry, parsed.defaults, base, lambda key, i=i: _where(path, data, ("tasks", i, key))))
    return Suite(path=path, tasks=tuple(tasks))


def _resolve(entry: TaskEntry, defaults: Defaults, base: Path, where: Any) -> Task:
    def existing(key: str, value: str | None, *, folder: bool = False) -> Path | None:
        if value is None:
            return None
        found = (base / value).resolve()
        ok = found.is_dir() if folder else found.is_file()
        if not ok:
            kind = "folder" if folder else "file"
            what = f"no such {kind}"
            if not folder and found.exists():  # a FIFO or a device: it is never waited on nor read
                what = f"{file_kind(found.stat().st_mode)}, not a regular file"
            raise UsageError(f"{where(key)}: task '{entry.id}': {key} {value}: {what}")
        return found

    if (entry.goal is None) == (entry.goal_file is None):
        raise UsageError(f"{where('id')}: task '{entry.id}' needs exactly one of goal: or goal_file:")
    if entry.script is not None and entry.cassette is not None:
        raise UsageError(
            f"{where('script')}: task '{entry.id}': script: plays offline replies and cassette: "
            "serves a recording; give one of them"
        )
    if entry.model is not None and (entry.script is not None or entry.cassette is not None):
        raise UsageError(
            f"{where('model')}: task '{entry.id}': model: cannot go with script:/cassette: (they decide the model)"
        )
    goal = entry.goal
    goal_path = existing("goal_file", entry.goal_file)
    if goal_path is not None:
        try:
            goal = read_text(goal_path, limit=Limit.GOAL, encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or exc
            raise UsageError(f"{where('goal_file')}: task '{entry.id}': cannot read {entry.goal_file}: {why}") from None
        if not goal.strip():
            raise UsageError(f"{where('goal_file')}: task '{entry.id}': {entry.goal_file} is empty")
    gates = entry.gates if entry.gates is not None else defaults.gates or []
    for k, gate in enumerate(gates):
        missing = {"command": gate.command, "file": gate.path}.get(gate.kind, "ok")
        if missing is None:
            what = "command" if gate.kind == "command" else "path"
            raise UsageError(f"{where('gates')}: task '{entry.id}': gate {k + 1} ({gate.kind}) needs `{what}:`")
    script, cassette = existing("script", entry.script), existing("cassette", entry.cassette)
    model = None if script or cassette else entry.model or defaults.model
    tools = entry.tools if entry.tools is not None else defaults.tools
    workdir = existing("workdir", entry.workdir, folder=True)
    if workdir is not None and (too_big := _too_big_to_copy(workdir)):
        raise UsageError(
            f"{where('workdir')}: task '{entry.id}': workdir {entry.workdir} ({workdir}) holds {too_big}: "
            "every attempt copies it whole; point workdir at the task's own folder"
        )
    return Task(
        id=entry.id,
        goal=str(goal),
        workdir=workdir,
        setup=entry.setup if entry.setup is not None else defaults.setup,
        setup_timeout_s=entry.setup_timeout_s or defaults.setup_timeout_s,
        gates=tuple(g.model_dump(exclude_none=True) for g in gates),
        script=script,
        cassette=cassette,
        model=model,
        max_steps=entry.max_steps or defaults.max_steps,
        timeout_s=entry.timeout_s or defaults.timeout_s,
        tools=tuple(tools) if tools is not None else None,
    )


MAX_WORKDIR_FILES = 100_000  # a task's workdir is copied per attempt: past this it is not a task's folder
MAX_WORKDIR_BYTES = 2 << 30


@lru_cache(maxsize=64)
def _too_big_to_copy(
    folder: Path, max_files: int = MAX_WORKDIR_FILES, max_bytes: int = MAX_WORKDIR_BYTES
) -> str | None:
    """What makes `folder` too big to copy per attempt ("more than 100,000 files"), or None. A user
    trial: `workdir: ../..` made every attempt copy the whole disk, silently, until killed. Walks no
    further than the limits (links not followed; `.arreio/` is not copied, so not counted)."""
    files = size = 0
    stack = [folder]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.name == ".arreio":
                        continue
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(Path(entry.path))
                            continue
                        files += 1
                        if entry.is_file(follow_symlinks=False):
                            size += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
                    if files > max_files:
                        return f"more than {max_files:,} files"
                    if size > max_bytes:
                        return f"more than {max_bytes:,} bytes"
        except OSError:
            continue
    return None

"""How one sandboxed call runs: the bwrap command line (pure) and the run's sandbox that makes it.

`RunSandbox` is made once per run (`run_sandbox(ctx)`): the bwrap found where the agent cannot have
put one, the environment without arreio's credentials, the protected places made to exist so they
can be mounted read-only, and the guard that checks what a call left behind. Each call then asks it
for a `Call` — the argv, the environment, the limits its first process joins — and hands the Call
back when the command has ended (`finish`), which says to the model what was refused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from arreio.engine.core.paths import make_state_dir
from arreio.engine.core.programs import agent_writable, inside_any
from arreio.engine.tools.sandbox.guard import Before, PlantGuard
from arreio.engine.tools.sandbox.limits import Box, open_box
from arreio.engine.tools.sandbox.probe import Availability, Probe, availability, namespace_args
from arreio.engine.tools.sandbox.seccomp import program_fd
from arreio.engine.tools.sandbox.settings import SandboxSettings, sandbox_settings
from arreio.engine.walls.agent_env import agent_env
from arreio.engine.walls.protected import STATE, STATE_ENTRIES, USER_CONFIG, protected_areas

if TYPE_CHECKING:
    from arreio.engine.tools.run_context import RunContext


def bwrap_args(
    cwd: Path, settings: SandboxSettings, protected: list[Path], writable: list[Path], pinned: list[Path] = ()
) -> list[str]:
    """Everything between `bwrap` and `--` for one call. Pure: `protected` and `writable` are resolved
    paths that exist; protected ones overlapping a writable area are re-mounted read-only last.
    `pinned`: folders (nested repositories) bound onto themselves, which makes each a mount point:
    it cannot be renamed or removed, so a planted repository cannot take its place."""
    read_only = settings.mode == "read-only"
    args = namespace_args(network=settings.network)
    at = args.index("/tmp") - 1  # "--tmpfs /tmp" gets its size
    args[at:at] = ["--size", str(settings.limits.tmp_mb << 20)]
    # The working directory again (it may lie under /tmp, which the private /tmp just hid).
    args += ["--ro-bind" if read_only else "--bind", str(cwd), str(cwd)]
    areas = [cwd] if not read_only else []
    if not read_only:
        for root in writable:
            args += ["--bind", str(root), str(root)]
            areas.append(root)
        for folder in pinned:
            args += ["--bind", str(folder), str(folder)]
    for path in protected:
        if any(_overlaps(path, area) for area in areas):
            args += ["--ro-bind", str(path), str(path)]
    return [*args, "--chdir", str(cwd)]


@dataclass(frozen=True)
class SandboxPlan:
    """How one shell call runs: `argv(bash, command)` is the whole command line to execute."""

    bwrap: str
    args: list[str]
    settings: SandboxSettings

    def argv(self, bash: str, command: str) -> list[str]:
        return [self.bwrap, *self.args, "--", bash, "-c", command]


@dataclass
class Call:
    """One sandboxed call: `argv` to execute (None: unsandboxed, run the command as it is) — the
    sandbox inside the call's limits —, `env`, and the notes `RunSandbox.finish` adds for the model."""

    plan: SandboxPlan | None
    env: dict[str, str]
    box: Box | None = None
    before: Before | None = None
    notes: list[str] = field(default_factory=list)
    seccomp_fd: int | None = None  # the filter bwrap loads (network off: no unix sockets), passed to the child

    def argv(self, bash: str, command: str) -> list[str] | None:
        if self.plan is None:
            return None
        argv = self.plan.argv(bash, command)
        if self.seccomp_fd is not None:
            at = argv.index("--")
            argv[at:at] = ["--seccomp", str(self.seccomp_fd)]
        return self.box.wrap(argv) if self.box is not None else argv

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return (self.seccomp_fd,) if self.seccomp_fd is not None else ()


class RunSandbox:
    """One run's sandbox (module docstring). `found` says whether bwrap can run here."""

    def __init__(self, ctx: RunContext, probe: Probe | None = None) -> None:
        self.ctx = ctx
        self.settings = ctx.section(sandbox_settings)
        self.writable = agent_writable(ctx.cwd, ctx.env, self.settings.writable_roots)
        self.env = agent_env(ctx.env, self.settings.env_passthrough)
        if self.settings.mode == "off":
            self.found = Availability(None, reason="sandbox.mode: off")
        else:
            self.found = availability(ctx.env, probe, self.writable)
        self.guard: PlantGuard | None = None
        self._nested: list[Path] | None = None
        if self.active:
            watched = self._prepare_protected()
            links = [
                area.root
                for area in protected_areas(ctx.cwd, ctx.env, ctx.state_dir)
                if os.path.islink(area.root) and inside_any(Path(os.path.dirname(area.root)), self.writable)
            ]
            self.guard = PlantGuard(
                ctx.cwd, watched, (ctx.state_dir or ctx.cwd / ".arreio") / "refused" / ctx.run_id, links
            )

    @property
    def active(self) -> bool:
        return self.settings.mode != "off" and self.found.ok

    def _prepare_protected(self) -> list[Path]:
        """Make the protected folders that are missing inside a writable area, so they can be mounted
        read-only; list what cannot be made ahead, for the guard."""
        watched: list[Path] = []
        if self.settings.mode == "read-only":
            return watched
        for area in protected_areas(self.ctx.cwd, self.ctx.env, self.ctx.state_dir):
            if os.path.lexists(area.root) or not inside_any(area.root, self.writable):
                continue
            name = area.root.name
            try:
                if area.what == STATE and name in STATE_ENTRIES and name not in _STATE_FILES:
                    area.root.mkdir(parents=True, exist_ok=True)  # a folder of a state folder that holds cwd
                    continue
                if area.what == STATE and name not in STATE_ENTRIES:
                    make_state_dir(area.root)
                    continue
                if area.what == USER_CONFIG:
                    area.root.mkdir(parents=True, exist_ok=True)
                    continue
            except OSError:
                pass
            watched.append(area.root)
        return watched

    def plan(self) -> SandboxPlan | None:
        """The bwrap command line for a call now (the protected paths that exist now)."""
        if not self.active or self.found.bwrap is None:
            return None
        ctx = self.ctx
        writable = [root for root in self.writable[1:] if root.is_dir()]
        gits = self.guard.git.known() if self.guard is not None else set()
        tops = {str(ctx.cwd / ".git"), str(ctx.cwd / ".arreio")}
        # A nested repository's .git (or a sub-folder's .arreio) is read-only as the file tools keep
        # it, and the repository itself is pinned in place; a link is left to the guard.
        nested = _existing(
            Path(p)
            for p in sorted(gits)
            if p not in tops and not os.path.islink(p) and os.path.basename(p).casefold() in (".git", ".arreio")
        )
        protected = _existing(area.root for area in protected_areas(ctx.cwd, ctx.env, ctx.state_dir))
        pinned = [
            p.parent
            for p in nested
            if p.name.casefold() == ".git" and p.parent != ctx.cwd and p.parent.is_relative_to(ctx.cwd)
        ]
        # Each folder between a writable area and a protected place in it is pinned too: a folder
        # holding a mount point can be renamed, and a new one made in its place (ARREIO_HOME=tools/state).
        areas = [ctx.cwd, *writable]
        for path in protected:
            area = next((a for a in areas if path != a and path.is_relative_to(a)), None)
            for parent in path.parents if area is not None else ():
                if parent == area or not parent.is_relative_to(area):
                    break
                if parent not in pinned:
                    pinned.append(parent)
        pinned.sort(key=lambda p: len(p.parts))
        return SandboxPlan(
            self.found.bwrap, bwrap_args(ctx.cwd, self.settings, protected + nested, writable, pinned), self.settings
        )

    def start(self) -> Call:
        """A call about to run: its plan, environment, limits, and what the guard saw before it."""
        if not self.active:
            return Call(None, dict(self.env))
        before = self.guard.before() if self.guard is not None else None
        seccomp = program_fd() if not self.settings.network else None
        return Call(self.plan(), dict(self.env), open_box(self.settings.limits), before, seccomp_fd=seccomp)

    def finish(self, call: Call) -> list[str]:
        """After the call has ended: the limits it ran into and what it planted (moved away)."""
        notes: list[str] = []
        if call.seccomp_fd is not None:
            os.close(call.seccomp_fd)
            call.seccomp_fd = None
        if call.box is not None:
            notes += [f"[sandbox: {said}]" for said in call.box.hit()]
            call.box.close()
        if self.guard is not None and call.before is not None:
            notes += self.guard.after(call.before)
        call.notes = notes
        return notes


# State-folder entries that are files: they are watched, not made ahead.
_STATE_FILES = frozenset(
    {"config.yaml", "MEMORY.md", "USER.md", "knowledge.sqlite", "audit.jsonl", "context_calibration.json"}
)


def run_sandbox(ctx: RunContext, probe: Probe | None = None) -> RunSandbox:
    """The run's sandbox, made on first use and kept with the run's context."""
    return ctx.per_run(("sandbox", probe), lambda: RunSandbox(ctx, probe))


def sandbox_plan(ctx: RunContext, probe: Probe | None = None) -> SandboxPlan | None:
    """The sandbox for a call in this run, or None: `mode: off`, or it cannot run here (the run has
    been told so by `SandboxFeature`)."""
    return run_sandbox(ctx, probe).plan()


def protected(cwd: Path, env: Mapping[str, str], state: Path | None = None) -> list[Path]:
    """The protected paths that exist, resolved, without repeats (bwrap can only mount what exists)."""
    return _existing(area.root for area in protected_areas(cwd, env, state))


def _existing(paths) -> list[Path]:  # noqa: ANN001 - any iterable of paths
    out: list[Path] = []
    for path in paths:
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            continue
        if real.exists() and real not in out:
            out.append(real)
    return out


def _overlaps(a: Path, b: Path) -> bool:
    """One holds the other: a protected folder inside the working directory, or around it."""
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


# -- what the model is told -----------------------------------------------------------------------
_WRITE_REFUSED = re.compile(r"Read-only file system|Permission denied")
_NETWORK_REFUSED = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|Name or service not known"
)


def refusal_hint(output: str, plan: SandboxPlan) -> str | None:
    """A short note when the output shows the sandbox refusing something, so the model stops trying
    other ways round it. Pure; it says "most likely": the same words can have another cause."""
    notes: list[str] = []
    if _WRITE_REFUSED.search(output):
        where = (
            "nothing is writable (sandbox.mode: read-only)"
            if plan.settings.mode == "read-only"
            else "only the working directory is writable, and .arreio/, .git/ and arreio's config are "
            "read-only even there"
        )
        notes.append(
            "a 'Read-only file system' or 'Permission denied' above is most likely the OS sandbox "
            f"refusing the write: {where}"
        )
    if not plan.settings.network and _NETWORK_REFUSED.search(output):
        notes.append("the network is off in the OS sandbox (sandbox.network: false): connections and name lookups fail")
    if not notes:
        return None
    return "[sandbox: " + "; ".join(notes) + ". Do not look for a way round it; say what you need instead]"

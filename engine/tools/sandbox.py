"""The OS sandbox `shell` runs in (DESIGN.md invariant 10: the agent stays in its room).

On Linux, each shell call runs under bubblewrap (`bwrap`): the whole filesystem read-only, the
working directory read-write (`workspace-write`) or read-only too (`read-only`); a private `/tmp`;
a minimal `/dev`, a fresh `/proc`; arreio's protected paths (`engine/governance/protected.py`: the
state folder, `.git`, arreio's config) read-only even inside the working directory; no network
unless `sandbox.network: true`; every capability dropped (as root, a kept CAP_SYS_ADMIN could
simply remount `/` read-write); a PID namespace of its own with `--die-with-parent`, so no process
— a `setsid … &` child included — outlives its call.

```yaml
sandbox:
  mode: workspace-write      # read-only | off (off: shell runs as a plain subprocess)
  network: false             # true: share the host network (and the host's sockets under /run)
  writable_roots: [~/.cache] # extra folders shell may write in workspace-write mode
```

Where the sandbox cannot run (no bwrap, not Linux, namespaces refused: probed once per process and
remembered), shell runs unsandboxed and the run says so once, as a `warning` (`SandboxFeature`);
`mode: off` is the user's choice and says nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from arreio.engine import events as ev
from arreio.engine.config import parse_section
from arreio.engine.feature import Feature
from arreio.engine.governance.protected import protected_paths
from arreio.engine.hooks import RunHook
from arreio.engine.tools.nested_git import find_nested_git, nested_git_dirs

if TYPE_CHECKING:
    from arreio.engine.conveyor.report import RunReport
    from arreio.engine.hooks import Turn
    from arreio.engine.run_context import RunContext

Mode = Literal["workspace-write", "read-only", "off"]
PROBE_TIMEOUT_S = 10.0


class SandboxSettings(BaseModel):
    """The `sandbox:` section of config.yaml."""

    model_config = ConfigDict(extra="forbid")

    mode: Mode = Field(
        "workspace-write",
        description="workspace-write: shell writes only in the working directory; read-only: nowhere; "
        "off: no OS sandbox. Where the sandbox cannot start, shell runs unsandboxed with a warning.",
    )
    network: bool = Field(False, description="Let sandboxed commands use the network (and host sockets under /run).")
    writable_roots: list[str] = Field(
        default_factory=list,
        description="Absolute (or ~/) folders shell may also write in workspace-write mode, e.g. a build cache; "
        "protected paths stay read-only inside them.",
    )

    @field_validator("writable_roots")
    @classmethod
    def _absolute(cls, value: list[str]) -> list[str]:
        for root in value:
            if not (root.startswith(("/", "~/")) or root == "~"):
                raise ValueError(f"'{root}' must be an absolute path or start with ~/ "
                                 "(the working directory is writable already)")
        return value


def parse_sandbox(raw: Mapping[str, Any] | None) -> SandboxSettings:
    """Validate the section; a mistake is one ConfigError naming the field (`sandbox.mode`)."""
    return parse_section(SandboxSettings, raw, "sandbox")


def sandbox_settings(settings: Any) -> SandboxSettings:
    """The run's `sandbox:` section (`RunContext.section(sandbox_settings)` parses it once per run)."""
    return parse_sandbox(getattr(settings, "sandbox", None))


# -- can it run here? -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Availability:
    """Whether bubblewrap can sandbox here: `bwrap` is its path (None: not found), `version` what
    `bwrap --version` said, `reason` why it cannot (None: it can)."""

    bwrap: str | None
    version: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.bwrap is not None and self.reason is None


Probe = Callable[[str], Availability]
_PROBED: dict[tuple[str, Probe], Availability] = {}
_PROBE_LOCK = threading.Lock()  # batch workers share the process: one probe, not one each


def find_bwrap(env: Mapping[str, str]) -> str | None:
    """bwrap on the run's PATH (`ctx.env`, never the process env); the system default path without one."""
    return shutil.which("bwrap", path=env.get("PATH") or os.defpath)


def probe_bwrap(bwrap: str) -> Availability:
    """Start one trivial sandbox with the same namespaces and mounts a call uses (a container may
    refuse user namespaces, or mounting `/proc`); its first stderr line is the reason it failed."""
    env = {"PATH": "/usr/bin:/bin"}
    try:
        version = subprocess.run([bwrap, "--version"], capture_output=True, text=True, env=env,
                                 timeout=PROBE_TIMEOUT_S, check=False).stdout.strip() or None
        tried = subprocess.run([bwrap, *_namespace_args(network=False), "--", "true"],
                               capture_output=True, text=True, env=env, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return Availability(bwrap, None, f"bubblewrap could not be run ({exc})")
    if tried.returncode != 0:
        said = (tried.stderr.strip().splitlines() or [f"exit code {tried.returncode}"])[0]
        return Availability(bwrap, version, f"bubblewrap cannot start a sandbox here: {said}")
    return Availability(bwrap, version)


def availability(env: Mapping[str, str], probe: Probe | None = None) -> Availability:
    """Whether shell can be sandboxed for a run with `env`; each bwrap is probed once per process."""
    if not sys.platform.startswith("linux"):
        return Availability(None, reason=f"no OS sandbox for {sys.platform} yet (bubblewrap is Linux-only)")
    bwrap = find_bwrap(env)
    if bwrap is None:
        return Availability(None, reason="bubblewrap (bwrap) is not installed or not on PATH")
    key = (bwrap, probe or probe_bwrap)
    with _PROBE_LOCK:
        if key not in _PROBED:
            _PROBED[key] = key[1](bwrap)
        return _PROBED[key]


# -- the sandbox of one call ----------------------------------------------------------------------
def _namespace_args(*, network: bool) -> list[str]:
    """The mounts every sandbox starts from and the namespaces it leaves; the working directory and
    protected paths are mounted after these (bwrap applies its arguments in order)."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if not network:
        # Host daemons listen on sockets under /run (docker.sock, dbus, databases): a read-only
        # mount does not stop connect(), and no network should mean no door to them either.
        args += ["--tmpfs", "/run"]
    # No --new-session: the shell tool already starts bwrap in its own session with no terminal,
    # and keeping the sandbox in that process group lets a timeout SIGTERM reach the command.
    # --cap-drop ALL: run as root, bwrap keeps every capability, and CAP_SYS_ADMIN can simply
    # `mount -o remount,rw /` (tried: it wrote to the host's /usr). As a user it is a no-op.
    args += ["--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"]
    if not network:
        args.append("--unshare-net")
    return args


def bwrap_args(cwd: Path, settings: SandboxSettings, protected: list[Path], writable: list[Path]) -> list[str]:
    """Everything between `bwrap` and `--` for one call. Pure: `protected` and `writable` are resolved
    paths that exist; protected ones overlapping a writable area are re-mounted read-only last."""
    read_only = settings.mode == "read-only"
    args = _namespace_args(network=settings.network)
    # The working directory again (it may lie under /tmp, which the private /tmp just hid).
    args += ["--ro-bind" if read_only else "--bind", str(cwd), str(cwd)]
    areas = [cwd] if not read_only else []
    if not read_only:
        for root in writable:
            args += ["--bind", str(root), str(root)]
            areas.append(root)
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


def sandbox_plan(ctx: RunContext, probe: Probe | None = None) -> SandboxPlan | None:
    """The sandbox for a shell call in this run, or None: `mode: off`, or it cannot run here (the
    run has been told so by `SandboxFeature`)."""
    settings = ctx.section(sandbox_settings)
    if settings.mode == "off":
        return None
    found = availability(ctx.env, probe)
    if not found.ok or found.bwrap is None:
        return None
    if settings.mode == "workspace-write" and ctx.state_dir is not None and _overlaps(ctx.state_dir, ctx.cwd):
        # A missing state folder cannot be mounted read-only, and one the agent creates could hold
        # a config.yaml the next run obeys (`sandbox: {mode: off}`): make it exist first.
        ctx.state_dir.mkdir(parents=True, exist_ok=True)
    writable = [root for root in (_expand(r, ctx.env) for r in settings.writable_roots) if root.is_dir()]
    # A nested repository's .git is protected as the file tools protect it (nested_git.py).
    nested = [p for p in nested_git_dirs(str(ctx.cwd), ctx.run_id) if p.exists()]
    return SandboxPlan(found.bwrap, bwrap_args(ctx.cwd, settings, protected(ctx.cwd, ctx.env, ctx.state_dir) + nested,
                                               writable), settings)


def protected(cwd: Path, env: Mapping[str, str], state: Path | None = None) -> list[Path]:
    """The protected paths that exist, resolved, without repeats (bwrap can only mount what exists)."""
    out: list[Path] = []
    for path in protected_paths(cwd, env, state):
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            continue
        if real.exists() and real not in out:
            out.append(real)
    return out


def _expand(root: str, env: Mapping[str, str]) -> Path:
    if root == "~" or root.startswith("~/"):
        root = (env.get("HOME") or str(Path.home())) + root[1:]
    return Path(root).resolve()


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
        where = ("nothing is writable (sandbox.mode: read-only)" if plan.settings.mode == "read-only" else
                 "only the working directory is writable, and .arreio/, .git/ and arreio's config are "
                 "read-only even there")
        notes.append("a 'Read-only file system' or 'Permission denied' above is most likely the OS sandbox "
                     f"refusing the write: {where}")
    if not plan.settings.network and _NETWORK_REFUSED.search(output):
        notes.append("the network is off in the OS sandbox (sandbox.network: false): connections and name "
                     "lookups fail")
    if not notes:
        return None
    return "[sandbox: " + "; ".join(notes) + ". Do not look for a way round it; say what you need instead]"


def unsandboxed_warning(found: Availability) -> str:
    """The one warning a run gets when shell cannot be sandboxed."""
    fix = " (apt-get install bubblewrap)" if found.bwrap is None and sys.platform.startswith("linux") else ""
    return (f"shell runs UNSANDBOXED: {found.reason}{fix}; its commands can write outside the working "
            "directory, reach the network and leave processes running. Set sandbox.mode: off to "
            "choose this and silence the warning.")


class _SayOnce(RunHook):
    """The unsandboxed warning as one `warning` event, at the first unit start of a run that offers
    shell (a plan's later units and sub-agents ask again: the flag keeps it to one)."""

    name = "sandbox"

    def __init__(self, message: str) -> None:
        self.message = message
        self.said = False

    def at_unit_start(self, turn: Turn) -> list[ev.Event]:
        if self.said or "shell" not in turn.tools:
            return []
        self.said = True
        return [ev.Warning_(message=self.message, code="sandbox")]


class SandboxFeature(Feature):
    """Validates `sandbox:` and makes sure a run never runs shell unsandboxed silently. `probe`
    replaces the real bwrap probe (tests simulate a machine where namespaces are refused)."""

    name = "sandbox"

    def __init__(self, probe: Probe | None = None) -> None:
        self.probe = probe
        self._hook: _SayOnce | None = None

    def check(self, ctx: RunContext) -> None:
        ctx.section(sandbox_settings)

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        self._hook = None
        if ctx.section(sandbox_settings).mode == "off":
            return []
        found = availability(ctx.env, self.probe)
        if found.ok:
            return []
        self._hook = _SayOnce(unsandboxed_warning(found))
        return [self._hook]

    def after_run(self, ctx: RunContext, report: RunReport) -> None:
        hook, self._hook = self._hook, None
        if hook is not None and hook.said:
            report.warnings.append(hook.message)


def status(cwd: Path, env: Mapping[str, str], settings: SandboxSettings, state: Path | None = None) -> dict[str, Any]:
    """What `arreio sandbox status` shows: the mode in force, network, bwrap, the protected paths."""
    found = availability(env) if settings.mode != "off" else Availability(find_bwrap(env))
    active = settings.mode != "off" and found.ok
    return {
        "mode": settings.mode, "active": active, "network": settings.network,
        "bwrap": found.bwrap, "version": found.version, "unavailable": None if settings.mode == "off" else found.reason,
        "writable_roots": settings.writable_roots,
        "protected": [str(p) for p in [*protected_paths(cwd, env, state), *find_nested_git(cwd.resolve())]],
    }

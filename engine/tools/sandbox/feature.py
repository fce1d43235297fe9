"""Saying so: a run never runs the agent's commands unsandboxed silently, and `arreio sandbox status`."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arreio.engine import events as ev
from arreio.engine.feature import Feature
from arreio.engine.governance.agent_env import dropped_names
from arreio.engine.governance.protected import protected_paths
from arreio.engine.hooks import RunHook
from arreio.engine.programs import agent_writable
from arreio.engine.tools.nested_git import find_nested_git
from arreio.engine.tools.sandbox.limits import enforced
from arreio.engine.tools.sandbox.plan import run_sandbox
from arreio.engine.tools.sandbox.probe import Availability, Probe, availability, find_bwrap
from arreio.engine.tools.sandbox.seccomp import program
from arreio.engine.tools.sandbox.settings import SandboxSettings, sandbox_settings

if TYPE_CHECKING:
    from arreio.engine.conveyor.report import RunReport
    from arreio.engine.hooks import Turn
    from arreio.engine.run_context import RunContext

OFF_WARNING = ("sandbox.mode: off (set in config): shell and command gates run UNSANDBOXED — the agent's commands "
               "can write anywhere you can, reach the network and leave processes running")


def unsandboxed_warning(found: Availability) -> str:
    """The one warning a run gets when shell cannot be sandboxed."""
    fix = " (apt-get install bubblewrap)" if found.bwrap is None and sys.platform.startswith("linux") else ""
    return (f"shell runs UNSANDBOXED: {found.reason}{fix}; its commands can write outside the working "
            "directory, reach the network and leave processes running. Set sandbox.mode: off to "
            "choose this.")


class _SayOnce(RunHook):
    """A warning as one `warning` event, at the first unit start of a run that offers shell (a
    plan's later units and sub-agents ask again: the flag keeps it to one)."""

    name = "sandbox"

    def __init__(self, message: str, code: str) -> None:
        self.message, self.code = message, code
        self.said = False

    def at_unit_start(self, turn: Turn) -> list[ev.Event]:
        if self.said or "shell" not in turn.tools:
            return []
        # the offline model never calls shell: no sandbox missing matters to its run (a config that
        # turns the sandbox off is still said on every run)
        if self.code == "sandbox" and turn.provider.name == "offline":
            return []
        self.said = True
        return [ev.Warning_(message=self.message, code=self.code)]


class SandboxFeature(Feature):
    """Validates `sandbox:` and makes sure a run never runs shell unsandboxed silently: where the
    sandbox cannot start, and where config turned it off (every run says so). `probe` replaces the
    real bwrap probe (tests simulate a machine where namespaces are refused)."""

    name = "sandbox"

    def __init__(self, probe: Probe | None = None) -> None:
        self.probe = probe
        self._hooks: dict[str, _SayOnce] = {}

    def check(self, ctx: RunContext) -> None:
        ctx.section(sandbox_settings)

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        self._hooks.pop(ctx.run_id, None)
        sandbox = run_sandbox(ctx, self.probe)
        if sandbox.active:
            return []
        if sandbox.settings.mode == "off":
            hook = _SayOnce(OFF_WARNING, "sandbox_off")
        else:
            hook = _SayOnce(unsandboxed_warning(sandbox.found), "sandbox")
        self._hooks[ctx.run_id] = hook
        return [hook]

    def after_run(self, ctx: RunContext, report: RunReport) -> None:
        hook = self._hooks.pop(ctx.run_id, None)
        if hook is not None and hook.said:
            report.warnings.append(hook.message)


def status(cwd: Path, env: Mapping[str, str], settings: SandboxSettings, state: Path | None = None) -> dict[str, Any]:
    """What `arreio sandbox status` shows: the mode in force, network, bwrap, the protected paths,
    the limits and how each is enforced here, and the environment variables the agent does not get."""
    untrusted = agent_writable(cwd, env, settings.writable_roots)
    found = availability(env, untrusted=untrusted) if settings.mode != "off" else Availability(find_bwrap(env, untrusted))
    active = settings.mode != "off" and found.ok
    limits = settings.limits.model_dump()
    return {
        "mode": settings.mode, "active": active, "network": settings.network,
        "bwrap": found.bwrap, "version": found.version, "unavailable": None if settings.mode == "off" else found.reason,
        "writable_roots": settings.writable_roots,
        "protected": [str(p) for p in [*protected_paths(cwd, env, state), *find_nested_git(cwd.resolve())]],
        "limits": limits, "limits_enforced": enforced() if active else {},
        "unix_sockets": ("open (sandbox.network: true)" if settings.network else
                         "refused (a seccomp filter)" if program() is not None else
                         "reachable: no seccomp filter for this machine") if active else None,
        "env_withheld": dropped_names(env, settings.env_passthrough),
    }

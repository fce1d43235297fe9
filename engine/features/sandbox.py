"""Saying so: a run never runs the agent's commands unsandboxed silently.

The words are in `tools/sandbox/status.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arreio.engine.core import events as ev
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import RunHook
from arreio.engine.loop.report import Section
from arreio.engine.tools.sandbox.plan import run_sandbox
from arreio.engine.tools.sandbox.probe import Probe
from arreio.engine.tools.sandbox.settings import sandbox_settings
from arreio.engine.tools.sandbox.status import OFF_WARNING, unsandboxed_warning

if TYPE_CHECKING:
    from arreio.engine.loop.hooks import Turn
    from arreio.engine.loop.report import RunReport
    from arreio.engine.tools.run_context import RunContext


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
        self._hook: _SayOnce | None = None  # a started run's warning, if it has one

    def check(self, ctx: RunContext) -> None:
        ctx.section(sandbox_settings)

    def start(self, ctx: RunContext) -> SandboxFeature:
        return SandboxFeature(self.probe)

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        sandbox = run_sandbox(ctx, self.probe)
        if sandbox.active:
            return []
        if sandbox.settings.mode == "off":
            hook = _SayOnce(OFF_WARNING, "sandbox_off")
        else:
            hook = _SayOnce(unsandboxed_warning(sandbox.found), "sandbox")
        self._hook = hook
        return [hook]

    def after_run(self, ctx: RunContext, report: RunReport) -> Section | None:
        hook, self._hook = self._hook, None
        return Section(warnings=(hook.message,)) if hook is not None and hook.said else None

"""A feature plugs a layer above the engine (memory, skills, knowledge) into every run.

The engine never imports those layers (docs/architecture.md section 1). Each layer ships a `Feature` subclass next
to its code (`memory/feature.py`, ...), and the composition root (`cli/deps.py`) hands the pipeline a
list of them. The pipeline calls the hooks at fixed points of the conveyor, for every entry point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arreio.engine.core.ports import RunChanges, SystemPromptBlockSource
from arreio.engine.tools.run_context import RunContext

if TYPE_CHECKING:
    from arreio.engine.loop.hooks import RunHook
    from arreio.engine.loop.report import RunReport, Section
    from arreio.engine.tools.base import Tool
    from arreio.engine.tools.resolved import ResolvedTools


class Feature:
    """Override what you need; every hook defaults to doing nothing. Hooks must not raise for
    ordinary conditions: a feature that cannot work returns nothing and says why in a warning."""

    name = "feature"

    def check(self, ctx: RunContext) -> None:
        """Validate this feature's config section before anything is created (a `ConfigError` then
        fails the run cleanly, leaving no empty session behind). Parse it with `ctx.section(parse)`:
        the result is kept for the run, so tools() and hooks() do not parse it again."""

    def tools(self, ctx: RunContext) -> list[Tool]:
        """Tools this feature offers in this run (only those whose prerequisite holds)."""
        return []

    def start(self, ctx: RunContext) -> Feature:
        """The object that serves this run, once `check` passed: every later call of the run (tools,
        prompt blocks, hooks, events, after_run) goes to it. A feature that keeps anything for a run
        returns a fresh per-run object here; one that keeps nothing returns itself. The feature the
        composition root made is never changed by a run (a chat's turns and a program's concurrent
        runs share it)."""
        return self

    def tools_selected(self, ctx: RunContext, enable: list[str] | None, disable: list[str]) -> None:
        """Told the run's tool selectors (`--tools` / config: allow-list or None, deny-list) before
        `tools()` is asked, so a family can leave out what no selector could pass (an MCP server whose
        every tool is excluded is never started)."""

    def tools_resolved(self, ctx: RunContext, resolved: ResolvedTools) -> None:
        """Told the tools the run offers, once they are chosen (which family each is from, why others
        are not offered, what their schemas cost)."""

    def absent_namespaces(self, ctx: RunContext) -> dict[str, str]:
        """Tool-name prefixes this feature could have offered but does not in this run, each with why
        (`""`: left out on purpose); a selector naming one is then a warning, not an unknown tool."""
        return {}

    def prompt_blocks(self, ctx: RunContext) -> list[SystemPromptBlockSource]:
        """System prompt blocks for a NEW session (a resumed one keeps its frozen prompt)."""
        return []

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        """Turn-loop hooks for this run (governance, compaction, ...), asked in feature order."""
        return []

    def on_event(self, ctx: RunContext, event: Any) -> None:
        """Sees every event the run emits, in order (journals, metrics). Must be cheap; may not raise."""

    def run_changes(self, ctx: RunContext) -> RunChanges | None:
        """What this feature recorded of the files the run changed, for checks that hold the model's
        claims against the world (the promise gate); None: it keeps no such record."""
        return None

    def after_run(self, ctx: RunContext, report: RunReport) -> Section | None:
        """Called once the run's report is final, before it is written, with the report as it stands
        (the run's own fields and the sections of the features before this one). Returns this
        feature's `Section` of it (the fields it owns, the warnings it adds), or None; the report is
        frozen, never written here. A failure becomes a warning."""
        return None

"""Memory in a run: the frozen MEMORY.md/USER.md snapshot, the `memory` tool, and the run's records
(a transcript and an episodic record in the substores)."""

from __future__ import annotations

from typing import Any

from arreio.engine.core import events as ev
from arreio.engine.core.events import Warning_
from arreio.engine.core.paths import display_path
from arreio.engine.core.ports import SystemPromptBlockSource
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import RunHook
from arreio.engine.loop.report import RunReport
from arreio.engine.tools.base import Tool
from arreio.engine.tools.run_context import RunContext
from arreio.memory.run_records import record_decision, record_episode, record_transcript
from arreio.memory.snapshot import MemorySnapshotBlock
from arreio.memory.store import MemoryStores
from arreio.memory.substores import Substores
from arreio.memory.tool import MemoryTool


class _SnapshotNotices(RunHook):
    """Says once, when the run starts, what is wrong with the stores the snapshot was taken from."""

    name = "memory-notices"

    def __init__(self, block: Any) -> None:
        self.block = block

    def at_unit_start(self, turn: Any) -> list[ev.Event]:

        notices, self.block.notices = list(self.block.notices), []
        return [Warning_(message=n, code="memory") for n in notices]


class MemoryFeature(Feature):
    name = "memory"

    def __init__(self) -> None:
        self._block: MemorySnapshotBlock | None = None  # a started run's prompt block, for its notices

    def start(self, ctx: RunContext) -> MemoryFeature:
        return MemoryFeature()

    def _stores(self, ctx: RunContext):

        return MemoryStores.configured(ctx.state_dir, ctx.settings, ctx.clock, ctx.redactor)

    def tools(self, ctx: RunContext) -> list[Tool]:

        return [MemoryTool(self._stores(ctx))]

    def prompt_blocks(self, ctx: RunContext) -> list[SystemPromptBlockSource]:

        self._block = MemorySnapshotBlock(self._stores(ctx))
        return [self._block]

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        block, self._block = self._block, None
        return [_SnapshotNotices(block)] if block is not None else []

    def on_event(self, ctx: RunContext, event: Any) -> None:
        """Gate verdicts are decisions the run made: one `decision` record each."""
        if getattr(event, "type", None) != "gate_result":
            return

        try:
            record_decision(
                _substores(ctx),
                "arreio",
                kind="gate",
                subject=event.gate,
                verdict="passed" if event.passed else "failed",
                reason=event.detail,
                run_id=ctx.run_id,
            )
        except Exception:  # noqa: BLE001 - record keeping never breaks a run; the report shows the substore state
            pass

    def after_run(self, ctx: RunContext, report: RunReport) -> None:

        subs = _substores(ctx)
        record_transcript(
            subs,
            "arreio",
            run_id=report.run_id,
            session_id=report.session_id,
            session_path=display_path(ctx.session_path, ctx.cwd) if ctx.session_path else "",
            report_path=display_path(ctx.state_dir / "runs" / report.run_id / "report.json", ctx.cwd),
        )
        record_episode(
            subs,
            "arreio",
            run_id=report.run_id,
            goal=report.goal,
            verdict=report.verdict,
            tools_used=list(report.tools_used),
            cost_usd=report.cost_usd,
            summary=report.final_text[:500],
        )


def _substores(ctx: RunContext) -> Substores:
    """The run's substores: its redactor, and its `fsync` setting (every writer)."""
    subs = Substores(ctx.state_dir, ctx.clock, redactor=ctx.redactor)
    subs.durable = ctx.settings.fsync
    return subs

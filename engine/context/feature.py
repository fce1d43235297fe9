"""Context engineering plugged into every run: the `ContextFeature` and its turn-loop hook.

- before each model call: ask the model's server its window once (served.py), measure the request
  (calibrated estimate, stable-prefix share), withhold the result-set tools until the session has a
  set, compact first if a resumed history is already past the watermark, fit the reply cap to the room left;
- after each reply: fold the provider's reported input tokens into the per-model calibration;
- on each result: record it in the work log; turn a result over the threshold into a result set;
- after each tool round: past the watermark, prune old bulky results, and if that is not enough,
  compact (summary + verbatim tail, session rewritten atomically, a `compaction` event);
- after the run: return the report's context section and persist the calibration.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from arreio.engine.context.compaction import should_compact
from arreio.engine.context.compactor import WORKLOG_FILE
from arreio.engine.context.meter import RequestMeter
from arreio.engine.context.pruning import READ_TOOLS, WorkLog, read_key
from arreio.engine.context.reducer import HistoryReducer
from arreio.engine.context.resultsets import ResultStore
from arreio.engine.context.served import RunWindows, fit_reply_cap
from arreio.engine.context.settings import ContextSettings, context_settings
from arreio.engine.context.stats import ContextStats
from arreio.engine.context.tools import resultset_tools
from arreio.engine.core import events as ev
from arreio.engine.core.tokens import Calibrator, profile_for
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import Rewrite, RunHook, Turn
from arreio.engine.tools.base import ToolResult
from arreio.engine.tools.run_context import RunContext

if TYPE_CHECKING:
    from arreio.engine.core.messages import ToolCallPart
    from arreio.engine.core.model_io import ModelRequest, Usage
    from arreio.engine.loop.report import ContextSection, RunReport
    from arreio.engine.tools.base import Tool

RESULT_TOOLS = ("result_query", "result_grep")
CALIBRATION_FILE = "context_calibration.json"


class ContextHook(RunHook):
    """The turn loop's side of context engineering: what to send (the result-set tools withheld until
    the session has a set, the reply cap fitted to the room left), when to reduce the history (the
    `HistoryReducer` prunes and compacts), large results turned into sets. What it measures and
    caches is the `RequestMeter`'s."""

    name = "context"

    def __init__(
        self,
        cfg: ContextSettings,
        session_dir: Path,
        cwd: Path,
        calibrator: Calibrator,
        windows: RunWindows | None = None,
    ) -> None:
        self.cfg = cfg
        self.windows = windows or RunWindows(cfg, {}, None)  # what each model's server says its window is
        self.calibrator = calibrator
        self.store = ResultStore(session_dir)
        self.worklog = WorkLog(session_dir / WORKLOG_FILE)
        self.stats = ContextStats()
        self.offered = self.store.exists()  # the result-set tools are offered once the session has a set
        self.meter = RequestMeter(calibrator)
        self.reducer = HistoryReducer(
            cfg, session_dir, cwd, self.meter, self.windows, self.worklog, self.stats, self._context_tokens
        )

    def _context_tokens(self, turn: Turn) -> int:
        specs = [s for s in turn.tools.specs() if self.offered or s.name not in RESULT_TOOLS]
        return self.meter.context_tokens(turn.session, turn.system, specs, turn.model)

    def _for(self, model: str) -> None:
        self.meter.model, self.meter.profile = model, profile_for(model)

    # -- hooks ----------------------------------------------------------------------------------
    async def before_model(self, turn: Turn, request: ModelRequest) -> Rewrite:
        self._for(turn.model)
        rewrite = Rewrite(events=await self.windows.ensure(turn.model))
        if not self.offered and request.tools:
            rewrite.tools = [t for t in request.tools if t.name not in RESULT_TOOLS]
        window = self.windows.window(turn.model)
        if self.cfg.enabled and should_compact(self._context_tokens(turn), window, self.cfg.watermark):
            # A resumed (or freshly grown) history already past the watermark: reduce before sending.
            rewrite.events += await self.reducer.reduce(turn)
            rewrite.messages = list(turn.session.messages)
        sent = rewrite.applied_to(request)
        self.meter.measure(sent, turn.session, self.stats)
        rewrite.max_tokens = fit_reply_cap(sent, window, self.calibrator.tokens(turn.model, self.meter.raw_estimate))
        return rewrite

    def after_model(self, turn: Turn, usage: Usage) -> list[ev.Event]:
        reported = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        if reported and not usage.estimated:  # an estimate says nothing of the estimate's error
            self.stats.peak_context_tokens = max(self.stats.peak_context_tokens, reported)
            if self.cfg.calibrate:
                self.calibrator.observe(turn.model, self.meter.raw_estimate, reported)
        return []

    def transform_result(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> ToolResult:
        self.worklog.redactor = turn.session.redactor  # every writer redacts (the call's arguments are the model's)
        self.worklog.record(call, result.content, result.is_error)
        cfg = self.cfg
        if (
            not cfg.resultsets_on
            or result.is_error
            or result.images
            or call.name in cfg.resultset_exempt_tools
            or len(result.content) <= cfg.resultset_threshold_chars
        ):
            return result
        raw = result.full or result.content  # a tool that had to cut its output hands over the whole
        try:
            handle, table, types = self.store.store(call.name, call.arguments, raw)
        except Exception as error:  # noqa: BLE001 - a set we cannot store leaves the result as it was
            return ToolResult(result.content + f"\n[could not store as a result set: {error}]", result.is_error)
        self.offered = True
        self.stats.result_sets += 1
        return ToolResult(self.store.introduce(handle, call.name, table, types, raw, self.cfg.resultset_preview_rows))

    def after_tool(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> list[ev.Event]:
        if call.name in READ_TOOLS:
            path = str(call.arguments.get("path", "")).removeprefix("./")
            if read_key(call) in self.reducer.pruned_paths or "/artifacts/" in path:
                self.stats.pruned_rereads += 1
        return []

    async def after_tool_round(self, turn: Turn) -> list[ev.Event]:
        self._for(turn.model)
        return await self.reducer.reduce(turn) if self.cfg.enabled else []

    async def on_context_overflow(self, turn: Turn) -> list[ev.Event] | None:
        """The provider refused the request as too long: prune and compact now, whatever the estimate
        said (it was wrong for this model); None when there is nothing left to cut."""
        if (said := turn.last_error) is not None and said.window:
            self.windows.learn(turn.model, said.window)  # the server named its window: fit to it from now on
        if not self.cfg.enabled:
            return None
        self._for(turn.model)
        before = len(turn.session.messages)
        tokens = self._context_tokens(turn)
        events = self.reducer.prune(turn, tokens) if self.cfg.prune else []
        events += await self.reducer.compact(turn, self._context_tokens(turn))
        return events if events or len(turn.session.messages) != before else None

    def section(self) -> ContextSection:
        return self.stats.section()


class ContextFeature(Feature):
    """Compaction, pruning, result sets and context stats for every run (settings: `context:`)."""

    name = "context"

    def check(self, ctx: RunContext) -> None:
        ctx.section(context_settings)

    def __init__(self) -> None:
        self._hook: ContextHook | None = None  # a started run's (`start`), else None

    def start(self, ctx: RunContext) -> ContextFeature:
        return ContextFeature()

    def tools(self, ctx: RunContext) -> list[Tool]:
        cfg = ctx.section(context_settings)
        return resultset_tools() if cfg.resultsets_on else []

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        cfg = ctx.section(context_settings)
        session_dir = ctx.state_dir / "sessions" / ctx.session_id
        windows = RunWindows(cfg, ctx.env, ctx.settings.base_url)
        hook = ContextHook(cfg, session_dir, ctx.cwd, Calibrator.load(ctx.state_dir / CALIBRATION_FILE), windows)
        self._hook = hook
        return [hook]

    def after_run(self, ctx: RunContext, report: RunReport) -> ContextSection | None:
        hook, self._hook = self._hook, None
        if hook is None:
            return None
        section = hook.section()
        if hook.cfg.calibrate and hook.calibrator.samples:
            try:
                hook.calibrator.save(ctx.state_dir / CALIBRATION_FILE, durable=ctx.settings.fsync)
            except OSError as error:  # the run's figures still stand
                return replace(section, warnings=(f"context: the token calibration was not saved: {error}",))
        return section

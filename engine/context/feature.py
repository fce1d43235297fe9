"""Context engineering plugged into every run: the `ContextFeature` and its turn-loop hook.

- before each model call: measure the request (calibrated estimate, stable-prefix share), withhold the
  result-set tools until the session has a set, and compact first if a resumed history is already
  past the watermark;
- after each reply: fold the provider's reported input tokens into the per-model calibration;
- on each result: record it in the work log; turn a result over the threshold into a result set;
- after each tool round: past the watermark, prune old bulky results, and if that is not enough,
  compact (summary + verbatim tail, session rewritten atomically, a `compaction` event);
- after the run: fill the RunReport's context fields and persist the calibration.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arreio.engine import events as ev
from arreio.engine.atomic import write_atomic
from arreio.engine.context.compaction import prepare_compaction, should_compact, summarise, summariser_backoff
from arreio.engine.context.pruning import WorkLog, apply_pruning, plan_pruning
from arreio.engine.context.resultsets import ResultStore, column_profile, format_rows
from arreio.engine.context.settings import ContextSettings, context_settings
from arreio.engine.context.summary import render_summary
from arreio.engine.context.tokens import Calibrator, estimate_message, estimate_prefix, profile_for
from arreio.engine.context.tools import resultset_tools
from arreio.engine.context.window import context_window
from arreio.engine.feature import Feature
from arreio.engine.hooks import RunHook, Turn
from arreio.engine.paths import display_path
from arreio.engine.run_context import RunContext
from arreio.engine.tools.base import ToolResult

if TYPE_CHECKING:
    from arreio.engine.conveyor.report import RunReport
    from arreio.engine.messages import Message, ToolCallPart
    from arreio.engine.providers.base import ModelRequest, Usage
    from arreio.engine.tools.base import Tool

RESULT_TOOLS = ("result_query", "result_grep")
CALIBRATION_FILE = "context_calibration.json"
READ_TOOLS = ("read_file",)


@dataclass
class ContextStats:
    peak_context_tokens: int = 0
    compactions: int = 0
    tokens_before: list[int] = field(default_factory=list)
    tokens_after: list[int] = field(default_factory=list)
    pruned_results: int = 0
    pruned_rereads: int = 0
    result_sets: int = 0
    summary_fallbacks: int = 0
    prefix_tokens: float = 0.0
    request_tokens: float = 0.0

    @property
    def stable_prefix_share(self) -> float:
        return round(self.prefix_tokens / self.request_tokens, 4) if self.request_tokens else 0.0


class ContextHook(RunHook):
    name = "context"

    def __init__(self, cfg: ContextSettings, session_dir: Path, cwd: Path, calibrator: Calibrator) -> None:
        self.cfg = cfg
        self.session_dir = session_dir
        self.cwd = cwd
        self.calibrator = calibrator
        self.store = ResultStore(session_dir)
        self.worklog = WorkLog(session_dir / "worklog.jsonl")
        self.stats = ContextStats()
        self.offered = self.store.exists()
        self.failures = 0
        self.skip = 0
        self.pruned_paths: set[str] = set()
        self._weights: dict[int, tuple[Any, float, int]] = {}  # id(message) -> (message, tokens, hash)
        self._previous: list[tuple[int, float]] = []
        self._raw_estimate = 0.0
        self._profile = "claude"
        self._model = ""
        self._pending_events: list[ev.Event] = []  # from a compaction in before_model, which cannot yield events

    # -- measuring ------------------------------------------------------------------------------
    def _entry(self, message: Message) -> tuple[float, int]:
        cached = self._weights.get(id(message))
        if cached is None or cached[0] is not message:
            cached = (message, estimate_message(message, self._profile), hash(message.model_dump_json()))
            self._weights[id(message)] = cached
        return cached[1], cached[2]

    def weigh(self, message: Message) -> float:
        return self._entry(message)[0] * self.calibrator.factor(self._model)

    def _context_tokens(self, turn: Turn) -> int:
        specs = [s for s in turn.tools.specs() if self.offered or s.name not in RESULT_TOOLS]
        raw = estimate_prefix(turn.system, specs, self._profile) + sum(self._entry(m)[0] for m in turn.session.messages)
        return self.calibrator.tokens(turn.model, raw)

    def _window(self, model: str) -> int:
        return context_window(model, self.cfg.windows, self.cfg.window)

    def _measure(self, request: ModelRequest) -> None:
        tools = json.dumps([t.model_dump() for t in request.tools], sort_keys=True)
        elements = [(hash(tools), estimate_prefix([], request.tools, self._profile))]
        elements += [(hash((b.name, b.text)), estimate_prefix([b], [], self._profile)) for b in request.system]
        elements += [(h, w) for w, h in (self._entry(m) for m in request.messages)]
        common = 0.0
        for (h1, w), (h0, _) in zip(elements, self._previous):
            if h1 != h0:
                break
            common += w
        self._raw_estimate = sum(w for _, w in elements)
        self.stats.prefix_tokens += common
        self.stats.request_tokens += self._raw_estimate
        self._previous = elements
        self.stats.peak_context_tokens = max(
            self.stats.peak_context_tokens, self.calibrator.tokens(request.model, self._raw_estimate)
        )

    # -- hooks ----------------------------------------------------------------------------------
    async def before_model(self, turn: Turn, request: ModelRequest):
        self._model, self._profile = turn.model, profile_for(turn.model)
        if not self.offered and request.tools:
            request.tools = [t for t in request.tools if t.name not in RESULT_TOOLS]
        if self.cfg.enabled and should_compact(self._context_tokens(turn), self._window(turn.model), self.cfg.watermark):
            # A resumed (or freshly grown) history already past the watermark: reduce before sending.
            self._pending_events = await self._reduce(turn)
            request.messages = list(turn.session.messages)
        self._measure(request)

    def after_model(self, turn: Turn, usage: Usage) -> list[ev.Event]:
        reported = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        if reported:
            self.stats.peak_context_tokens = max(self.stats.peak_context_tokens, reported)
            if self.cfg.calibrate:
                self.calibrator.observe(turn.model, self._raw_estimate, reported)
        events, self._pending_events = self._pending_events, []
        return events

    def transform_result(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> ToolResult:
        self.worklog.record(call, result.content, result.is_error)
        cfg = self.cfg
        if (
            not cfg.resultsets_on or result.is_error or result.images or call.name in cfg.resultset_exempt_tools
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
        return ToolResult(self._handle_text(call, handle, table, types, raw))

    def _handle_text(self, call: ToolCallPart, handle: str, table, types: list[str], raw: str) -> str:
        shown = table.rows[: self.cfg.resultset_preview_rows]
        with self.store.reader(handle) as db:
            profile = column_profile(db, handle, table.columns, types)
        schema = ", ".join(f"{c} {t}" for c, t in zip(table.columns, types))
        return "\n".join([
            (f"[result set {handle}: this {call.name} result was {len(raw.splitlines())} lines / {len(raw)} chars — too "
             f"large for the context, so it is stored whole as a queryable set of {len(table.rows)} rows ({table.kind})]"),
            f"Schema: {schema}",
            "Columns:", *profile,
            f"First {len(shown)} of {len(table.rows)} rows:",
            format_rows(table.columns, [tuple(r) for r in shown], width=160),
            (f"[showing {len(shown)} of {len(table.rows)} rows. Ask for the rest with result_query(handle=\"{handle}\", "
             f"where=…, group_by=…, aggregate=…, order_by=…, limit=…, offset=…) or result_grep(handle=\"{handle}\", pattern=…)]"),
        ])

    def after_tool(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> list[ev.Event]:
        if call.name in READ_TOOLS:
            path = str(call.arguments.get("path", "")).removeprefix("./")
            if _read_key(call) in self.pruned_paths or "/artifacts/" in path:
                self.stats.pruned_rereads += 1
        return []

    async def after_tool_round(self, turn: Turn) -> list[ev.Event]:
        self._model, self._profile = turn.model, profile_for(turn.model)
        return await self._reduce(turn) if self.cfg.enabled else []

    async def on_context_overflow(self, turn: Turn) -> list[ev.Event] | None:
        """The provider refused the request as too long: prune and compact now, whatever the estimate
        said (it was wrong for this model); None when there is nothing left to cut."""
        if not self.cfg.enabled:
            return None
        self._model, self._profile = turn.model, profile_for(turn.model)
        before = len(turn.session.messages)
        tokens = self._context_tokens(turn)
        events = self._prune(turn, tokens) if self.cfg.prune else []
        events += await self._compact(turn, self._context_tokens(turn))
        return events if events or len(turn.session.messages) != before else None

    # -- pruning and compaction -----------------------------------------------------------------
    def _keep_tail(self, model: str) -> float:
        return self.cfg.keep_tail_tokens or self.cfg.keep_tail_ratio * self._window(model)

    async def _reduce(self, turn: Turn) -> list[ev.Event]:
        """Prune past `prune_at` (or, without it, just before a compaction); compact past the watermark."""
        window, cfg = self._window(turn.model), self.cfg
        tokens = self._context_tokens(turn)
        compact = cfg.compaction_on and should_compact(tokens, window, cfg.watermark)
        events: list[ev.Event] = []
        if cfg.prune and (compact or (cfg.prune_at and tokens >= cfg.prune_at * window)):
            events += self._prune(turn, tokens)
            tokens = self._context_tokens(turn)
            compact = cfg.compaction_on and should_compact(tokens, window, cfg.watermark)
        if compact:
            events += await self._compact(turn, tokens)
        return events

    async def _compact(self, turn: Turn, before: int) -> list[ev.Event]:
        events: list[ev.Event] = []
        plan = prepare_compaction(turn.session.messages, self._keep_tail(turn.model), self.weigh)
        if plan is None:
            return events
        use_model = self.skip == 0
        provider, model = turn.provider, turn.model
        if self.cfg.summary_model and use_model:  # from the run's factory: recorded and replayed like the rest
            model = self.cfg.summary_model
            provider = turn.ctx.provider_factory(model, env=turn.ctx.env, base_url=turn.settings.base_url)
        summary, source, usage = await summarise(provider, model, plan, use_model=use_model, timeout_s=self.cfg.summary_timeout_s)
        turn.totals.add_usage(usage)
        if source == "model":
            self.failures = 0
        elif use_model:
            self.failures += 1
            self.skip = summariser_backoff(self.failures)
        else:
            self.skip -= 1
        archive = self.session_dir / "compacted" / f"{plan.meta.number:03d}.jsonl"
        write_atomic(archive, "".join(m.model_dump_json() + "\n" for m in plan.head))  # nothing is destroyed
        turn.session.rewrite([render_summary(summary, plan.meta), *plan.tail])
        after = self._context_tokens(turn)
        self.stats.compactions += 1
        self.stats.tokens_before.append(before)
        self.stats.tokens_after.append(after)
        events.append(ev.Compaction(tokens_before=before, tokens_after=after, messages_removed=len(plan.head)))
        if source != "model":
            self.stats.summary_fallbacks += 1
            events.append(ev.Warning_(message=f"compaction used the deterministic summary ({source})", code="compaction_fallback"))
        return events

    def _prune(self, turn: Turn, before: int) -> list[ev.Event]:
        messages = turn.session.messages
        indices = plan_pruning(
            messages, self._keep_tail(turn.model), self.cfg.prune_min_chars, self.weigh,
            frozenset(self.cfg.prune_exempt_tools),
        )
        if not indices:
            return []
        calls = {c.id: c for m in messages if m.role == "assistant" for c in m.tool_calls}
        new, pruned = apply_pruning(
            messages, indices, calls, self.worklog, self.session_dir / "artifacts", lambda p: display_path(p, self.cwd)
        )
        turn.session.rewrite(new)
        self.stats.pruned_results += len(pruned)
        self.pruned_paths |= {_read_key(c) for c in pruned if c.name in READ_TOOLS}
        after = self._context_tokens(turn)
        return [ev.Compaction(tokens_before=before, tokens_after=after, messages_removed=0, kind="prune")]

    def fill(self, report: RunReport) -> None:
        s = self.stats
        report.peak_context_tokens = s.peak_context_tokens
        report.compactions = s.compactions
        report.context_tokens_before = list(s.tokens_before)
        report.context_tokens_after = list(s.tokens_after)
        report.pruned_results = s.pruned_results
        report.pruned_rereads = s.pruned_rereads
        report.result_sets = s.result_sets
        report.stable_prefix_share = s.stable_prefix_share


def _read_key(call: ToolCallPart) -> str:
    """What a read showed: the path and the page, so reading another page is not a re-read."""
    path = str(call.arguments.get("path", "")).removeprefix("./")
    return f"{path}|{call.arguments.get('offset') or ''}|{call.arguments.get('limit') or ''}"


class ContextFeature(Feature):
    """Compaction, pruning, result sets and context stats for every run (settings: `context:`)."""

    name = "context"

    def check(self, ctx: RunContext) -> None:
        ctx.section(context_settings)

    def __init__(self) -> None:
        self._hooks: dict[str, ContextHook] = {}

    def tools(self, ctx: RunContext) -> list[Tool]:
        cfg = ctx.section(context_settings)
        return resultset_tools() if cfg.resultsets_on else []

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        cfg = ctx.section(context_settings)
        session_dir = ctx.state_dir / "sessions" / ctx.session_id
        hook = ContextHook(cfg, session_dir, ctx.cwd, Calibrator.load(ctx.state_dir / CALIBRATION_FILE))
        self._hooks[ctx.run_id] = hook
        return [hook]

    def after_run(self, ctx: RunContext, report: RunReport) -> None:
        hook = self._hooks.pop(ctx.run_id, None)
        if hook is None:
            return
        hook.fill(report)
        if hook.cfg.calibrate and hook.calibrator.samples:
            hook.calibrator.save(ctx.state_dir / CALIBRATION_FILE)

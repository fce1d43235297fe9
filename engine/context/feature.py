"""Context engineering plugged into every run: the `ContextFeature` and its turn-loop hook.

- before each model call: ask the model's server its window once (served.py), measure the request
  (calibrated estimate, stable-prefix share), withhold the result-set tools until the session has a
  set, compact first if a resumed history is already past the watermark, fit the reply cap to the room left;
- after each reply: fold the provider's reported input tokens into the per-model calibration;
- on each result: record it in the work log; turn a result over the threshold into a result set;
- after each tool round: past the watermark, prune old bulky results, and if that is not enough,
  compact (summary + verbatim tail, session rewritten atomically, a `compaction` event);
- after the run: fill the RunReport's context fields and persist the calibration.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arreio.engine.context.artifacts import ArtifactFile
from arreio.engine.context.compaction import prepare_compaction, should_compact, summarise, summariser_backoff
from arreio.engine.context.prefix_sums import PrefixSums
from arreio.engine.context.pruning import READ_TOOLS, WorkLog, apply_pruning, call_of, plan_pruning, read_key, sample_stub
from arreio.engine.context.resultsets import ResultStore
from arreio.engine.context.served import RunWindows, fit_reply_cap
from arreio.engine.context.settings import ContextSettings, context_settings
from arreio.engine.context.stats import ContextStats
from arreio.engine.context.tools import resultset_tools
from arreio.engine.core import events as ev
from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.paths import display_path
from arreio.engine.core.summary import render_summary
from arreio.engine.core.tokens import Calibrator, estimate_message, estimate_prefix, profile_for
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import RunHook, Turn
from arreio.engine.providers.endpoint import endpoint_of, is_local
from arreio.engine.tools.base import ToolResult
from arreio.engine.tools.run_context import RunContext

if TYPE_CHECKING:
    from arreio.engine.core.messages import Message, ToolCallPart
    from arreio.engine.core.model_io import ModelRequest, Usage
    from arreio.engine.loop.report import RunReport
    from arreio.engine.tools.base import Tool

RESULT_TOOLS = ("result_query", "result_grep")
CALIBRATION_FILE = "context_calibration.json"


class ContextHook(RunHook):
    name = "context"

    def __init__(self, cfg: ContextSettings, session_dir: Path, cwd: Path, calibrator: Calibrator,
                 windows: RunWindows | None = None) -> None:
        self.cfg = cfg
        self.windows = windows or RunWindows(cfg, {}, None)  # what each model's server says its window is
        self.session_dir = session_dir
        self.cwd = cwd
        self.calibrator = calibrator
        self.store = ResultStore(session_dir)
        self.worklog = WorkLog(session_dir / "worklog.jsonl")
        self.artifacts = ArtifactFile(session_dir / "artifacts")  # pruned results' raw text
        self._shown_paths: dict[Path, str] = {}
        self.stats = ContextStats()
        self.offered = self.store.exists()
        self.failures = 0
        self.skip = 0
        self.pruned_paths: set[str] = set()
        self._weights: dict[int, tuple[Any, float]] = {}  # id(message) -> (message, tokens)
        self._hashes: dict[int, tuple[Any, int]] = {}  # id(message) -> (message, hash), made when needed
        self._previous: list[tuple[int, float]] = []
        # Per session id: prefix sums of the history's weights, kept as it grows.
        self._sums: dict[str, PrefixSums] = {}
        self._prefixes: dict[tuple[Any, ...], tuple[list[Any], float]] = {}  # (profile, ids) -> (objects, tokens)
        self._tool_hashes: dict[tuple[int, ...], tuple[list[Any], int]] = {}
        self._last_measure: tuple[Any, ...] | None = None  # what `_measure` may extend next time
        self._pruned_upto: dict[str, tuple[int, int | None]] = {}  # session id -> (index, at revision)
        self._last_head: list[tuple[int, float]] = []
        self._last_request: list[Any] | None = None
        self._raw_estimate = 0.0
        self._profile = "claude"
        self._model = ""
        self._pending_events: list[ev.Event] = []  # from a compaction in before_model, which cannot yield events
        self._stub_weight = 0.0  # the mean weight of the last prune's stubs (`_prune`)

    # -- measuring ------------------------------------------------------------------------------
    def _tokens(self, message: Message) -> float:
        cached = self._weights.get(id(message))
        if cached is None or cached[0] is not message:
            cached = self._weights[id(message)] = (message, estimate_message(message, self._profile))
        return cached[1]

    def _entry(self, message: Message) -> tuple[float, int]:
        """(tokens, content hash): the hash only for a request off the usual path (`_measure`)."""
        cached = self._hashes.get(id(message))
        if cached is None or cached[0] is not message:
            cached = self._hashes[id(message)] = (message, hash(message.model_dump_json()))
        return self._tokens(message), cached[1]

    def weigh(self, message: Message) -> float:
        return self._tokens(message) * self.calibrator.factor(self._model)

    def _context_tokens(self, turn: Turn) -> int:
        specs = [s for s in turn.tools.specs() if self.offered or s.name not in RESULT_TOOLS]
        raw = self._prefix(turn.system, specs) + self._history_tokens(turn.session)
        return self.calibrator.tokens(turn.model, raw)

    def _prefix(self, system: list[Any], specs: list[Any]) -> float:
        """`estimate_prefix`, once per distinct system prompt and tool list (the same objects come
        back every turn: the prompt is frozen, the registry builds its specs once)."""
        key = (self._profile, tuple(id(b) for b in system), tuple(id(s) for s in specs))
        cached = self._prefixes.get(key)
        if cached is None or any(a is not b for a, b in zip(cached[0], [*system, *specs])):
            cached = ([*system, *specs], estimate_prefix(system, specs, self._profile))
            self._prefixes[key] = cached
        return cached[1]

    def _history_tokens(self, session: Any) -> float:
        """The history's raw token estimate: only messages appended (or replaced) since the last call
        are weighed."""
        return self._sums_of(session).total

    def _sums_of(self, session: Any) -> PrefixSums:
        sums = self._sums.get(session.id)
        if sums is None:
            sums = self._sums[session.id] = PrefixSums(self._tokens)
        sums.sync(session)
        return sums

    def _tools_hash(self, tools: list[Any]) -> int:
        key = tuple(id(t) for t in tools)
        cached = self._tool_hashes.get(key)
        if cached is None or any(a is not b for a, b in zip(cached[0], tools)):
            cached = (list(tools), hash(json.dumps([t.model_dump() for t in tools], sort_keys=True)))
            self._tool_hashes[key] = cached
        return cached[1]

    def _window(self, model: str) -> int:
        return self.windows.window(model)

    def _measure(self, request: ModelRequest, session: Any) -> None:
        """The request's estimate and how much of it repeats the previous request's prefix. When the
        request is the session's history grown by appends since the last one (the usual turn), the
        whole previous request is the common prefix and only new messages are weighed."""
        head = [(self._tools_hash(request.tools), self._prefix([], request.tools))]
        head += [(hash((b.name, b.text)), self._prefix([b], [])) for b in request.system]
        messages, own = request.messages, session.messages
        is_history = len(messages) == len(own) and (not own or (messages[0] is own[0] and messages[-1] is own[-1]))
        last = self._last_measure
        if is_history and last is not None and last[0] == session.id and last[2] == head:
            # The previous request was this history too: what it shares with this one is the head
            # and the messages no prune or rewrite touched since (appends only add at the end).
            sums = self._sums_of(session)
            kept = min(session.unchanged_prefix(last[1]), last[3])
            head_weight = sum(w for _, w in head)
            self._raw_estimate = head_weight + sums.total
            common = head_weight + sums.upto(kept) if kept < last[3] else last[5]
            self._previous = []  # rebuilt only if a request off the fast path needs it
        else:
            elements = head + [(h, w) for w, h in (self._entry(m) for m in messages)]
            previous = self._previous or self._rebuild_previous()
            common = 0.0
            for (h1, w), (h0, _) in zip(elements, previous):
                if h1 != h0:
                    break
                common += w
            self._raw_estimate = sum(w for _, w in elements)
            self._previous = elements
        self._last_measure = (session.id, session.revision, head, len(messages), messages[-1] if messages else None,
                              self._raw_estimate) if is_history else None
        self._last_head, self._last_request = head, messages
        self.stats.prefix_tokens += common
        self.stats.request_tokens += self._raw_estimate
        self.stats.peak_context_tokens = max(
            self.stats.peak_context_tokens, self.calibrator.tokens(request.model, self._raw_estimate)
        )

    def _rebuild_previous(self) -> list[tuple[int, float]]:
        """The previous request's elements, when the fast path did not keep them."""
        if self._last_request is None:
            return []
        return [*self._last_head, *((h, w) for w, h in (self._entry(m) for m in self._last_request))]

    # -- hooks ----------------------------------------------------------------------------------
    async def before_model(self, turn: Turn, request: ModelRequest):
        self._model, self._profile = turn.model, profile_for(turn.model)
        self._pending_events += await self.windows.ensure(turn.model)
        if not self.offered and request.tools:
            request.tools = [t for t in request.tools if t.name not in RESULT_TOOLS]
        if self.cfg.enabled and should_compact(self._context_tokens(turn), self._window(turn.model), self.cfg.watermark):
            # A resumed (or freshly grown) history already past the watermark: reduce before sending.
            self._pending_events += await self._reduce(turn)
            request.messages = list(turn.session.messages)
        self._measure(request, turn.session)
        request.max_tokens = fit_reply_cap(request, self._window(turn.model), self.calibrator.tokens(turn.model, self._raw_estimate))

    def after_model(self, turn: Turn, usage: Usage) -> list[ev.Event]:
        reported = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        if reported and not usage.estimated:  # an estimate says nothing of the estimate's error
            self.stats.peak_context_tokens = max(self.stats.peak_context_tokens, reported)
            if self.cfg.calibrate:
                self.calibrator.observe(turn.model, self._raw_estimate, reported)
        events, self._pending_events = self._pending_events, []
        return events

    def transform_result(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> ToolResult:
        self.worklog.redactor = turn.session.redactor  # every writer redacts (the call's arguments are the model's)
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
        return ToolResult(self.store.introduce(handle, call.name, table, types, raw, self.cfg.resultset_preview_rows))

    def after_tool(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> list[ev.Event]:
        if call.name in READ_TOOLS:
            path = str(call.arguments.get("path", "")).removeprefix("./")
            if read_key(call) in self.pruned_paths or "/artifacts/" in path:
                self.stats.pruned_rereads += 1
        return []

    async def after_tool_round(self, turn: Turn) -> list[ev.Event]:
        self._model, self._profile = turn.model, profile_for(turn.model)
        return await self._reduce(turn) if self.cfg.enabled else []

    async def on_context_overflow(self, turn: Turn) -> list[ev.Event] | None:
        """The provider refused the request as too long: prune and compact now, whatever the estimate
        said (it was wrong for this model); None when there is nothing left to cut."""
        if (said := turn.last_error) is not None and said.window:
            self.windows.learn(turn.model, said.window)  # the server named its window: fit to it from now on
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
            # Only a batch worth a broken prompt cache is pruned, at the watermark too: results worth less
            # free too little to put the compaction off (each turn a broken cache), and the compaction
            # drops them anyway (its archive keeps them whole).
            at_watermark = compact
            events += self._prune(turn, tokens, at_least=cfg.prune_step * window)
            freed, tokens = tokens - (after := self._context_tokens(turn)), after
            compact = cfg.compaction_on and (
                should_compact(tokens, window, cfg.watermark) or (at_watermark and freed < cfg.prune_step * window))
        if compact:
            events += await self._compact(turn, tokens)
        return events

    async def _compact(self, turn: Turn, before: int) -> list[ev.Event]:
        events: list[ev.Event] = []
        plan = prepare_compaction(turn.session.messages, self._keep_tail(turn.model), self.weigh)
        if plan is None:
            return events
        entries = self.worklog.entries
        plan.records = {c.id: (e.label, e.digest) for m in plan.head if m.role == "assistant"
                        for c in m.tool_calls if (e := entries.get(c.id)) is not None}
        use_model = self.skip == 0
        provider, model = turn.provider, turn.model
        if self.cfg.summary_model and use_model:  # from the run's factory: recorded and replayed like the rest
            model = self.cfg.summary_model
            provider = turn.ctx.provider_factory(model, env=turn.ctx.env, base_url=turn.settings.base_url)
        summary, source, usage = await summarise(provider, model, plan, use_model=use_model, timeout_s=self.cfg.summary_timeout_s,
                                                 local=is_local(endpoint_of(model, turn.ctx.env, turn.settings.base_url)))
        turn.totals.add_usage(usage, model if source == "model" else None)  # counted per model (the report's costs)
        if source == "model":
            self.failures = 0
        elif use_model:
            self.failures += 1
            self.skip = summariser_backoff(self.failures)
        else:
            self.skip -= 1
        archive = self.session_dir / "compacted" / f"{plan.meta.number:03d}.jsonl"
        # Nothing lost, and no secret: each message as the session stored it (redacted on its way in).
        head = turn.session.stored_jsonl(plan.head)
        write_atomic(archive, head, durable=turn.settings.fsync)
        turn.session.rewrite([render_summary(summary, plan.meta), *plan.tail])
        # Forget the estimates of messages no history holds any more (they kept a long run's messages alive).
        alive = {id(m) for m in turn.session.messages}
        self._weights = {k: v for k, v in self._weights.items() if k in alive}
        self._hashes = {k: v for k, v in self._hashes.items() if k in alive}
        after = self._context_tokens(turn)
        self.stats.compactions += 1
        self.stats.tokens_before.append(before)
        self.stats.tokens_after.append(after)
        events.append(ev.Compaction(tokens_before=before, tokens_after=after, messages_removed=len(plan.head)))
        if source != "model":
            self.stats.summary_fallbacks += 1
            events.append(ev.Warning_(message=f"compaction used the deterministic summary ({source})", code="compaction_fallback"))
        return events

    def _prune(self, turn: Turn, before: int, at_least: float = 0.0) -> list[ev.Event]:
        """Stub the old bulky results when together they weigh at least `at_least` tokens (less: wait
        for more; the same candidates are looked at again next turn)."""
        session = turn.session
        messages = session.messages
        # Messages before the last prune's protected tail held nothing left to prune then: start there.
        mark, revision = self._pruned_upto.get(session.id, (0, None))
        start = min(mark, session.unchanged_prefix(revision)) if revision is not None else 0
        tail = self._keep_tail(turn.model)
        # The tail's start from the running sums: `weigh` is the estimate times the calibration factor.
        protected = self._sums_of(session).tail_start(tail / self.calibrator.factor(self._model))
        indices = plan_pruning(messages, tail, self.cfg.prune_min_chars, self.weigh,
                               frozenset(self.cfg.prune_exempt_tools), start=min(start, protected), protected=protected)
        if not indices:
            self._pruned_upto[session.id] = (max(start, protected), session.revision)
            return []
        # What it frees: the results less their stubs (weighing the results alone, half of `at_least`)
        if at_least and sum(self.weigh(messages[i]) for i in indices) - len(indices) * (
                self._stub_weight or self._guess_stub_weight(messages, indices[0])) < at_least:
            return []  # the mark stays: these candidates are counted again next turn
        calls = {c.id: c for c in (call_of(messages, i) for i in indices) if c is not None}
        self.artifacts.redactor = session.redactor  # every writer redacts: the history holds what the model saw
        stubs, pruned = apply_pruning(messages, indices, calls, self.worklog, self.artifacts, self._shown,
                                      durable=turn.settings.fsync)
        # One appended `prune` line, not a rewrite of the whole file.
        turn.session.replace_results(stubs)
        self._stub_weight = sum(self.weigh(session.messages[i]) for i in stubs) / len(stubs)
        self._pruned_upto[session.id] = (protected, session.revision)
        self.stats.pruned_results += len(pruned)
        self.pruned_paths |= {read_key(c) for c in pruned if c.name in READ_TOOLS}
        after = self._context_tokens(turn)
        return [ev.Compaction(tokens_before=before, tokens_after=after, messages_removed=0, kind="prune")]

    def _guess_stub_weight(self, messages: list[Message], index: int) -> float:
        """A stub's weight before a prune measured some: one rendered for `messages[index]`, kept."""
        path = self.artifacts.path
        stub = sample_stub(messages[index], call_of(messages, index), self.worklog, path, self._shown(path))
        self._stub_weight = estimate_message(stub, self._profile) * self.calibrator.factor(self._model)
        return self._stub_weight

    def _shown(self, path: Path) -> str:
        """An artifact's path as the stub shows it, worked out once per path (the shared file's is
        the same for every stub; display text only, no check depends on it)."""
        shown = self._shown_paths.get(path)
        if shown is None:
            shown = self._shown_paths[path] = display_path(path, self.cwd)
        return shown

    def fill(self, report: RunReport) -> None:
        self.stats.fill(report)


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
        windows = RunWindows(cfg, ctx.env, ctx.settings.base_url)
        hook = ContextHook(cfg, session_dir, ctx.cwd, Calibrator.load(ctx.state_dir / CALIBRATION_FILE), windows)
        self._hooks[ctx.run_id] = hook
        return [hook]

    def after_run(self, ctx: RunContext, report: RunReport) -> None:
        hook = self._hooks.pop(ctx.run_id, None)
        if hook is None:
            return
        hook.fill(report)
        if hook.cfg.calibrate and hook.calibrator.samples:
            hook.calibrator.save(ctx.state_dir / CALIBRATION_FILE, durable=ctx.settings.fsync)

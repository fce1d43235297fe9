"""What the context hook decides when the history grows too big: prune old bulky results (stubs that
point at the raw text, kept on disk) and compact (summary + verbatim tail, the session rewritten
atomically). It returns the events that say so; the hook returns them to the runner."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from arreio.engine.context.artifacts import ArtifactFile
from arreio.engine.context.compaction import prepare_compaction, should_compact, summariser_backoff
from arreio.engine.context.compactor import compact_session
from arreio.engine.context.pruning import (
    READ_TOOLS,
    WorkLog,
    apply_pruning,
    call_of,
    plan_pruning,
    read_key,
    sample_stub,
)
from arreio.engine.core import events as ev
from arreio.engine.core.paths import display_path
from arreio.engine.core.tokens import estimate_message
from arreio.engine.loop.totals import Spent
from arreio.engine.providers.endpoint import endpoint_of, is_local

if TYPE_CHECKING:
    from arreio.engine.context.meter import RequestMeter
    from arreio.engine.context.served import RunWindows
    from arreio.engine.context.settings import ContextSettings
    from arreio.engine.context.stats import ContextStats
    from arreio.engine.core.messages import Message
    from arreio.engine.loop.hooks import Turn


class HistoryReducer:
    """Prunes and compacts a run's histories (every runner's: per-session marks by session id).
    `tokens(turn)` is what the next request would weigh (the hook's measure, its withheld tools left out)."""

    def __init__(
        self,
        cfg: ContextSettings,
        session_dir: Path,
        cwd: Path,
        meter: RequestMeter,
        windows: RunWindows,
        worklog: WorkLog,
        stats: ContextStats,
        tokens: Any,
    ) -> None:
        self.cfg, self.session_dir, self.cwd = cfg, session_dir, cwd
        self.meter, self.windows, self.worklog, self.stats, self.tokens = meter, windows, worklog, stats, tokens
        self.artifacts = ArtifactFile(session_dir / "artifacts")  # pruned results' raw text
        self.failures = 0  # the summariser's failures in a row
        self.skip = 0  # compactions left that use the deterministic summary without asking the model
        self.pruned_paths: set[str] = set()
        self._shown_paths: dict[Path, str] = {}
        self._pruned_upto: dict[str, tuple[int, int | None]] = {}  # session id -> (index, at revision)
        self._stub_weight = 0.0  # the mean weight of the last prune's stubs (`prune`)

    def keep_tail(self, model: str) -> float:
        return self.cfg.keep_tail_tokens or self.cfg.keep_tail_ratio * self.windows.window(model)

    async def reduce(self, turn: Turn) -> list[ev.Event]:
        """Prune past `prune_at` (or, without it, just before a compaction); compact past the watermark."""
        window, cfg = self.windows.window(turn.model), self.cfg
        tokens = self.tokens(turn)
        compact = cfg.compaction_on and should_compact(tokens, window, cfg.watermark)
        events: list[ev.Event] = []
        if cfg.prune and (compact or (cfg.prune_at and tokens >= cfg.prune_at * window)):
            # Only a batch worth a broken prompt cache is pruned, at the watermark too: results worth less
            # free too little to put the compaction off (each turn a broken cache), and the compaction
            # drops them anyway (its archive keeps them whole).
            at_watermark = compact
            events += self.prune(turn, tokens, at_least=cfg.prune_step * window)
            freed, tokens = tokens - (after := self.tokens(turn)), after
            compact = cfg.compaction_on and (
                should_compact(tokens, window, cfg.watermark) or (at_watermark and freed < cfg.prune_step * window)
            )
        if compact:
            events += await self.compact(turn, tokens)
        return events

    async def compact(self, turn: Turn, before: int) -> list[ev.Event | Spent]:
        """Compact the history; the events to yield, and the summariser's call as `Spent` (the runner counts it)."""
        events: list[ev.Event | Spent] = []
        plan = prepare_compaction(turn.session.messages, self.keep_tail(turn.model), self.meter.weigh)
        if plan is None:
            return events
        use_model = self.skip == 0
        provider, model = turn.provider, turn.model
        if self.cfg.summary_model and use_model:  # from the run's factory: recorded and replayed like the rest
            model = self.cfg.summary_model
            provider = turn.ctx.provider_factory(model, env=turn.ctx.env, base_url=turn.settings.base_url)
        done = await compact_session(
            turn.session,
            plan,
            provider=provider,
            model=model,
            weigh=self.meter.weigh,
            archive_dir=self.session_dir / "compacted",
            durable=turn.settings.fsync,
            worklog=self.worklog,
            use_model=use_model,
            timeout_s=self.cfg.summary_timeout_s,
            local=is_local(endpoint_of(model, turn.ctx.env, turn.settings.base_url)),
        )
        source = done.source
        # the summariser's call, for the run's counters (per model: the report's costs)
        events.append(Spent(done.usage, model if source == "model" else None))
        if source == "model":
            self.failures = 0
        elif use_model:
            self.failures += 1
            self.skip = summariser_backoff(self.failures)
        else:
            self.skip -= 1
        self.meter.forget_all_but(turn.session.messages)
        after = self.tokens(turn)
        self.stats.compactions += 1
        self.stats.tokens_before.append(before)
        self.stats.tokens_after.append(after)
        events.append(ev.Compaction(tokens_before=before, tokens_after=after, messages_removed=len(plan.head)))
        if source != "model":
            self.stats.summary_fallbacks += 1
            events.append(
                ev.Warning_(message=f"compaction used the deterministic summary ({source})", code="compaction_fallback")
            )
        return events

    def prune(self, turn: Turn, before: int, at_least: float = 0.0) -> list[ev.Event]:
        """Stub the old bulky results when together they weigh at least `at_least` tokens (less: wait
        for more; the same candidates are looked at again next turn)."""
        session, meter = turn.session, self.meter
        messages = session.messages
        # Messages before the last prune's protected tail held nothing left to prune then: start there.
        mark, revision = self._pruned_upto.get(session.id, (0, None))
        start = min(mark, session.unchanged_prefix(revision)) if revision is not None else 0
        tail = self.keep_tail(turn.model)
        # The tail's start from the running sums: `weigh` is the estimate times the calibration factor.
        protected = meter.sums(session).tail_start(tail / meter.calibrator.factor(meter.model))
        indices = plan_pruning(
            messages,
            tail,
            self.cfg.prune_min_chars,
            meter.weigh,
            frozenset(self.cfg.prune_exempt_tools),
            start=min(start, protected),
            protected=protected,
        )
        if not indices:
            self._pruned_upto[session.id] = (max(start, protected), session.revision)
            return []
        # What it frees: the results less their stubs (weighing the results alone, half of `at_least`)
        if (
            at_least
            and sum(meter.weigh(messages[i]) for i in indices)
            - len(indices) * (self._stub_weight or self._guess_stub_weight(messages, indices[0]))
            < at_least
        ):
            return []  # the mark stays: these candidates are counted again next turn
        calls = {c.id: c for c in (call_of(messages, i) for i in indices) if c is not None}
        self.artifacts.redactor = session.redactor  # every writer redacts: the history holds what the model saw
        stubs, pruned = apply_pruning(
            messages, indices, calls, self.worklog, self.artifacts, self._shown, durable=turn.settings.fsync
        )
        # One appended `prune` line, not a rewrite of the whole file.
        turn.session.replace_results(stubs)
        self._stub_weight = sum(meter.weigh(session.messages[i]) for i in stubs) / len(stubs)
        self._pruned_upto[session.id] = (protected, session.revision)
        self.stats.pruned_results += len(pruned)
        self.pruned_paths |= {read_key(c) for c in pruned if c.name in READ_TOOLS}
        after = self.tokens(turn)
        return [ev.Compaction(tokens_before=before, tokens_after=after, messages_removed=0, kind="prune")]

    def _guess_stub_weight(self, messages: list[Message], index: int) -> float:
        """A stub's weight before a prune measured some: one rendered for `messages[index]`, kept."""
        path = self.artifacts.path
        stub = sample_stub(messages[index], call_of(messages, index), self.worklog, path, self._shown(path))
        meter = self.meter
        self._stub_weight = estimate_message(stub, meter.profile) * meter.calibrator.factor(meter.model)
        return self._stub_weight

    def _shown(self, path: Path) -> str:
        """An artifact's path as the stub shows it, worked out once per path (the shared file's is
        the same for every stub; display text only, no check depends on it)."""
        shown = self._shown_paths.get(path)
        if shown is None:
            shown = self._shown_paths[path] = display_path(path, self.cwd)
        return shown

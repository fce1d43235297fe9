"""The learning stage of the pipeline (`--learn`) and of `arreio learn`: pick a proposer, run the
kernel against the real memory stores, record every decision, never fail the run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from arreio.engine.core import events as ev
from arreio.engine.core.messages import Message
from arreio.engine.providers.registry import is_offline
from arreio.engine.tools.run_context import RunContext
from arreio.engine.walls.audit import AuditJournal
from arreio.engine.walls.redact import Redactor
from arreio.learning.gate import make_gate
from arreio.learning.kernel import Decision, LearnDeps, LearningOutcome, review_and_learn
from arreio.learning.lesson_gate import LessonGate
from arreio.learning.observations import KIND, Observation, observe
from arreio.learning.offline_proposer import OfflineProposer
from arreio.learning.proposers import ModelProposer, Proposer
from arreio.learning.summary import summarize
from arreio.memory.run_records import record_decision
from arreio.memory.store import MemoryStores
from arreio.memory.substores import Substores


def _proposer(ctx: RunContext, model: str, config: Mapping[str, Any]) -> Proposer:
    """The offline proposer for the offline family (with what earlier runs observed); else a model,
    from the run's provider factory (so a recording holds the proposer's call and a replay serves it)."""
    chosen = str(config.get("proposer_model") or model)
    if is_offline(chosen) or chosen.startswith("replay"):
        return OfflineProposer(_history(ctx))
    provider = ctx.provider_factory(chosen, env=ctx.env, base_url=ctx.settings.base_url)
    return ModelProposer(provider, chosen)


HISTORY_RUNS = 100  # earlier runs' observations a convention is looked for in


def _history(ctx: RunContext) -> list[Observation]:
    records, _ = Substores(ctx.state_dir, ctx.clock, redactor=ctx.redactor).list("procedural", limit=HISTORY_RUNS * 2)
    return [Observation.of(r.payload) for r in records if r.payload.get("kind") == KIND][:HISTORY_RUNS]


def _observe(ctx: RunContext, summary: Any) -> None:
    """This run's candidates for a convention, for later passes (a convention is seen twice)."""
    seen = observe(summary)
    if seen.tests or seen.outputs:
        subs = Substores(ctx.state_dir, ctx.clock, redactor=ctx.redactor)
        subs.append("procedural", "learning", {**seen.payload(), "run_id": ctx.run_id})


def _stores(ctx: RunContext) -> MemoryStores:
    """The real stores, refusing content that holds a secret by the run's redactor (a `failed` write)."""
    return MemoryStores.configured(ctx.state_dir, ctx.settings, ctx.clock, ctx.redactor)


def _redacted(decision: Decision, redactor: Redactor) -> Decision:
    """A decision as it may be recorded and shown, its texts redacted whole: a preview cuts them at 80
    characters, and a secret cut short no longer looks like one (a refused proposal's especially)."""
    proposal = decision.proposal
    if proposal is not None:
        proposal = proposal.model_copy(
            update={k: redactor.text(v) for k, v in proposal.model_dump().items() if isinstance(v, str)}
        )
    return replace(decision, proposal=proposal, raw=redactor.value(decision.raw), reason=redactor.text(decision.reason))


def record(ctx: RunContext, outcome: LearningOutcome) -> None:
    """Every outcome becomes decision records and audit entries, written with the run's redactor (a
    refused proposal's secret never reaches either)."""

    subs = Substores(ctx.state_dir, ctx.clock, redactor=ctx.redactor)
    journal = AuditJournal(ctx.state_dir, ctx.clock, redactor=ctx.redactor)
    if outcome.error:
        record_decision(
            subs,
            "learning",
            kind="learning",
            subject="pass",
            verdict="failed_closed",
            reason=outcome.error,
            run_id=ctx.run_id,
        )
        journal.append("learning", {"run_id": ctx.run_id, "verdict": "failed_closed", "reason": outcome.error})
        return
    for decision in outcome.decisions:
        details = decision.proposal.model_dump() if decision.proposal else {"raw": str(decision.raw)[:500]}
        verdict = f"would_{decision.bucket}" if outcome.dry_run else decision.bucket
        record_decision(
            subs,
            "learning",
            kind="learning",
            subject=decision.preview,
            verdict=verdict,
            reason=decision.reason,
            run_id=ctx.run_id,
            details=details,
        )
        journal.append(
            "learning",
            {"run_id": ctx.run_id, "verdict": verdict, "subject": decision.preview, "reason": decision.reason},
        )


async def learn(
    ctx: RunContext,
    *,
    events: list[Any],
    messages: list[Message],
    goal: str,
    model: str,
    config: Mapping[str, Any] | None = None,
    dry_run: bool = False,
) -> LearningOutcome:
    """Run the pass; any failure comes back in `LearningOutcome.error` (fail closed), never raised."""
    settings = {**ctx.settings.learning, **(config or {})}
    try:
        summary = summarize(events, messages, goal)
        gate = LessonGate(make_gate(settings.get("gate")), summary)  # the score, and what no score can buy
        deps = LearnDeps(proposer=_proposer(ctx, model, settings), gate=gate, stores=_stores(ctx), dry_run=dry_run)
        outcome = await review_and_learn(summary, deps)
        if not dry_run:
            _observe(ctx, summary)
    except Exception as exc:  # noqa: BLE001 - the pass is never fatal to the run
        outcome = LearningOutcome(error=f"{type(exc).__name__}: {exc}", dry_run=dry_run)
    outcome.decisions = [_redacted(decision, ctx.redactor) for decision in outcome.decisions]
    try:
        if not dry_run:
            record(ctx, outcome)
    except Exception as exc:  # noqa: BLE001
        outcome.note = f"decisions not recorded: {exc}"
    return outcome


class LearningStage:
    """What `cli/deps.py` hands the pipeline for `--learn`."""

    async def run(
        self,
        ctx: RunContext,
        *,
        events: list[Any],
        messages: list[Message],
        goal: str,
        model: str,
        config: Mapping[str, Any] | None = None,
    ) -> ev.LearningPassDone:
        outcome = await learn(ctx, events=events, messages=messages, goal=goal, model=model, config=config)
        return ev.LearningPassDone(
            applied=outcome.applied,
            rejected=outcome.rejected,
            failed=outcome.failed,
            error=outcome.error,
            lessons=outcome.lessons(),
        )

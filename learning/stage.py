"""The learning stage of the pipeline (`--learn`) and of `arreio learn`: pick a proposer, run the
kernel against the real memory stores, record every decision, never fail the run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arreio.engine import events as ev
from arreio.engine.governance.audit import AuditJournal
from arreio.engine.governance.redact import Redactor
from arreio.engine.messages import Message
from arreio.engine.providers.registry import is_offline
from arreio.engine.run_context import RunContext
from arreio.learning.gate import make_gate
from arreio.learning.kernel import LearnDeps, LearningOutcome, review_and_learn
from arreio.learning.proposers import ModelProposer, OfflineProposer, Proposer
from arreio.learning.summary import summarize
from arreio.memory.run_records import record_decision
from arreio.memory.store import MemoryStores
from arreio.memory.substores import Substores


def _proposer(ctx: RunContext, model: str, config: Mapping[str, Any]) -> Proposer:
    """The offline proposer for the offline family; else a model, from the run's provider factory (so
    a recording holds the proposer's call and a replay serves it)."""
    chosen = str(config.get("proposer_model") or model)
    if is_offline(chosen) or chosen.startswith("replay"):
        return OfflineProposer()
    provider = ctx.provider_factory(chosen, env=ctx.env, base_url=ctx.settings.base_url)
    return ModelProposer(provider, chosen)


class _SecretGuard:
    """A target store that refuses content holding a secret (a `failed` write)."""

    def __init__(self, store: Any, redactor: Redactor) -> None:
        self.store, self.redactor = store, redactor

    def _check(self, content: str) -> None:
        if self.redactor.text(content) != content:
            raise ValueError("the content holds a secret from the environment")

    def entries(self) -> list[str]:
        return self.store.entries()

    def add(self, content: str) -> Any:
        self._check(content)
        return self.store.add(content)

    def replace(self, old_text: str, content: str) -> Any:
        self._check(content)
        return self.store.replace(old_text, content)

    def remove(self, old_text: str) -> Any:
        return self.store.remove(old_text)


class _GuardedStores:
    def __init__(self, stores: Any, redactor: Redactor) -> None:
        self.stores, self.redactor = stores, redactor

    def get(self, target: str) -> _SecretGuard:
        return _SecretGuard(self.stores.get(target), self.redactor)


def _stores(ctx: RunContext):

    return _GuardedStores(MemoryStores.configured(ctx.state_dir, ctx.settings, ctx.clock), ctx.redactor)


def record(ctx: RunContext, outcome: LearningOutcome) -> None:
    """Every outcome becomes decision records and audit entries, written with the run's redactor (a
    refused proposal's secret never reaches either)."""

    subs = Substores(ctx.state_dir, ctx.clock, redactor=ctx.redactor)
    journal = AuditJournal(ctx.state_dir, ctx.clock, redactor=ctx.redactor)
    if outcome.error:
        record_decision(subs, "learning", kind="learning", subject="pass", verdict="failed_closed",
                        reason=outcome.error, run_id=ctx.run_id)
        journal.append("learning", {"run_id": ctx.run_id, "verdict": "failed_closed", "reason": outcome.error})
        return
    for decision in outcome.decisions:
        details = decision.proposal.model_dump() if decision.proposal else {"raw": str(decision.raw)[:500]}
        verdict = f"would_{decision.bucket}" if outcome.dry_run else decision.bucket
        record_decision(subs, "learning", kind="learning", subject=decision.preview, verdict=verdict,
                        reason=decision.reason, run_id=ctx.run_id, details=details)
        journal.append("learning", {"run_id": ctx.run_id, "verdict": verdict, "subject": decision.preview,
                                    "reason": decision.reason})


async def learn(
    ctx: RunContext, *, events: list[Any], messages: list[Message], goal: str, model: str,
    config: Mapping[str, Any] | None = None, dry_run: bool = False,
) -> LearningOutcome:
    """Run the pass; any failure comes back in `LearningOutcome.error` (fail closed), never raised."""
    settings = {**ctx.settings.learning, **(config or {})}
    try:
        deps = LearnDeps(proposer=_proposer(ctx, model, settings), gate=make_gate(settings.get("gate")),
                         stores=_stores(ctx), dry_run=dry_run)
        outcome = await review_and_learn(summarize(events, messages, goal), deps)
    except Exception as exc:  # noqa: BLE001 - the pass is never fatal to the run
        outcome = LearningOutcome(error=f"{type(exc).__name__}: {exc}", dry_run=dry_run)
    try:
        if not dry_run:
            record(ctx, outcome)
    except Exception as exc:  # noqa: BLE001
        outcome.note = f"decisions not recorded: {exc}"
    return outcome


class LearningStage:
    """What `cli/deps.py` hands the pipeline for `--learn`."""

    async def run(self, ctx: RunContext, *, events: list[Any], messages: list[Message], goal: str, model: str,
                  config: Mapping[str, Any] | None = None) -> ev.LearningPassDone:
        outcome = await learn(ctx, events=events, messages=messages, goal=goal, model=model, config=config)
        return ev.LearningPassDone(applied=outcome.applied, rejected=outcome.rejected, failed=outcome.failed,
                                   error=outcome.error, lessons=outcome.lessons())

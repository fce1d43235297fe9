"""The one compaction path: summarise a plan's head, archive it, rewrite the session as the summary
and the kept tail. The context hook runs it past the watermark (`ContextHook._compact`); the chat's
`/compact` runs it on a stored session between turns (`compact_stored`). Both get the work log's
records in the summary, the same durable archive under `sessions/<id>/compacted/` (nothing is
destroyed, and no secret: each message as the session stored it), and the summariser's usage back
for the caller's totals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arreio.engine.context.compaction import CompactionPlan, Weigh, prepare_compaction, summarise
from arreio.engine.context.pruning import WorkLog
from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.messages import Message
from arreio.engine.core.model_io import Usage
from arreio.engine.core.summary import render_summary
from arreio.engine.providers.endpoint import endpoint_of, is_local

WORKLOG_FILE = "worklog.jsonl"


@dataclass
class Compacted:
    """What one compaction did. `kept`: the summary was no shorter than the head it would replace, so
    the history stays as it was (asked only with `only_if_shorter`)."""

    plan: CompactionPlan
    source: str  # "model" or "fallback: <why>"
    model: str  # the summariser's model
    usage: Usage  # the summariser's usage: the caller counts it in its totals
    replaced: float  # the head's weight
    summary: float  # the summary's weight
    kept: bool = False

    @property
    def messages_removed(self) -> int:
        return len(self.plan.head)


def with_records(plan: CompactionPlan, worklog: WorkLog | None) -> CompactionPlan:
    """`plan` carrying the work log's record of each call in its head (label, what it showed when it
    ran): a result pruned since is only its stub in the head."""
    if worklog is not None:
        entries = worklog.entries
        plan.records = {
            c.id: (e.label, e.digest)
            for m in plan.head
            if m.role == "assistant"
            for c in m.tool_calls
            if (e := entries.get(c.id)) is not None
        }
    return plan


async def compact_session(
    session: Any,
    plan: CompactionPlan,
    *,
    provider: Any,
    model: str,
    weigh: Weigh,
    archive_dir: Path,
    durable: bool,
    worklog: WorkLog | None = None,
    use_model: bool = True,
    timeout_s: float | None = None,
    local: bool = False,
    only_if_shorter: bool = False,
) -> Compacted:
    """Summarise `plan.head` (the model, or the deterministic summary when it fails or `use_model` is
    off), archive the head to `archive_dir/NNN.jsonl` and rewrite `session` as the summary + `plan.tail`.
    With `only_if_shorter`, a summary at least as heavy as the head leaves everything as it was."""
    plan = with_records(plan, worklog)
    summary, source, usage = await summarise(
        provider, model, plan, use_model=use_model, timeout_s=timeout_s, local=local
    )
    message = render_summary(summary, plan.meta)
    replaced = sum(weigh(m) for m in plan.head)
    weight = weigh(message)
    done = Compacted(plan, source, model, usage, replaced, weight)
    if only_if_shorter and weight >= replaced:
        # A short conversation summarised is longer than itself: compacting would cost room, not make
        # it (and lose the verbatim turns for nothing).
        done.kept = True
        return done
    archive = archive_dir / f"{plan.meta.number:03d}.jsonl"
    write_atomic(archive, session.stored_jsonl(plan.head), durable=durable)
    session.rewrite([message, *plan.tail])
    return done


@dataclass
class StoredCompaction:
    """`compact_stored`'s answer: the compaction and the session's estimate around it."""

    done: Compacted
    tokens_before: int
    tokens_after: int
    cost_usd: float | None  # the summariser's, estimated (0 when free, None when its price is unknown)
    free: bool


async def compact_stored(
    path: Path,
    session_id: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    model: str,
    scripted: bool,
    provider_factory: Callable[..., Any],
) -> StoredCompaction | None:
    """Compact a stored session now, between runs, under its lock: everything before the last turn
    (the user wants the room now, where the hook keeps a tail of `keep_tail_ratio` of the window). A
    scripted session summarises deterministically (a script's replies are the conversation's, not
    summaries). None when there is nothing before the last turn to summarise."""
    from arreio.engine.context.settings import context_settings
    from arreio.engine.core.config import load_settings
    from arreio.engine.core.tokens import estimate_message, estimate_prefix, profile_for
    from arreio.engine.providers import registry
    from arreio.engine.providers.pricing import estimate_cost
    from arreio.engine.session.file import Session
    from arreio.engine.session.lock import SessionLock
    from arreio.engine.walls.redact import Redactor

    settings = load_settings(cwd, env, {"model": model})
    cfg = context_settings(settings)
    profile = profile_for(model)

    def weigh(message: Message) -> float:
        return estimate_message(message, profile)

    def tokens(session: Session) -> int:
        return round(estimate_prefix(session.header.system, [], profile) + sum(map(weigh, session.messages)))

    lock = SessionLock(path).acquire(session_id)
    try:
        session, _ = Session.open(path, repair=True, redactor=Redactor.from_env(env))
        session.durable = settings.fsync  # as a run writes it
        try:
            plan = prepare_compaction(session.messages, 0, weigh)
            if plan is None:
                return None
            before = tokens(session)
            summary_model = cfg.summary_model or model
            provider = provider_factory(summary_model, env=env, base_url=settings.base_url)
            done = await compact_session(
                session,
                plan,
                provider=provider,
                model=summary_model,
                weigh=weigh,
                archive_dir=path.parent / session_id / "compacted",
                durable=settings.fsync,
                worklog=WorkLog(path.parent / session_id / WORKLOG_FILE),
                use_model=not scripted,
                timeout_s=cfg.summary_timeout_s,
                only_if_shorter=True,
                local=is_local(endpoint_of(summary_model, env, settings.base_url)),
            )
            if scripted:
                done.source = "fallback: the deterministic summary (a --script chat)"
            after = round(before + done.summary - done.replaced) if done.kept else tokens(session)
            free = scripted or registry.is_offline(summary_model)
            billed = done.usage.input_tokens or done.usage.output_tokens
            cost = estimate_cost(summary_model, done.usage, settings.prices) if billed and not free else 0.0
            return StoredCompaction(done, before, after, cost, free)
        finally:
            session.close()
    finally:
        lock.release()

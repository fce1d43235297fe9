"""`/compact`: compact the chat's session now, between turns, with the engine's own pieces — the same
clean cut (`prepare_compaction`: no call/result pair is ever split), the same summariser (the model,
or the deterministic summary when it fails), the same summary message, and the replaced head
archived under `sessions/<id>/compacted/` (nothing is destroyed) — under the session's lock.

Where the context hook keeps a tail of `keep_tail_ratio` of the window, a compaction asked for by the
user keeps only the last turn verbatim: the user wants the room now. A chat started from `--script`
summarises deterministically (a script's replies are the conversation's, not summaries)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Compacted:
    tokens_before: int
    tokens_after: int
    messages_removed: int
    source: str  # "model" or "fallback: <why>"
    kept: bool = False  # the summary was no shorter than what it would replace: the history stays as it was


def _tokens(session: Any, profile: str) -> int:
    from arreio.engine.core.tokens import estimate_message, estimate_prefix

    return round(estimate_prefix(session.header.system, [], profile)
                 + sum(estimate_message(m, profile) for m in session.messages))


async def compact_now(state: Any, provider_factory: Any) -> Compacted | None:
    """Compact `state.session_id`; None when there is nothing before the last turn to summarise."""
    from arreio.engine.context.compaction import prepare_compaction, render_summary, summarise
    from arreio.engine.context.settings import context_settings
    from arreio.engine.core.atomic import write_atomic
    from arreio.engine.core.config import load_settings
    from arreio.engine.core.paths import state_dir
    from arreio.engine.core.tokens import estimate_message, profile_for
    from arreio.engine.providers.endpoint import endpoint_of, is_local
    from arreio.engine.session.file import Session
    from arreio.engine.session.lock import SessionLock

    store = state.store()
    sid = state.session_id
    path = store.path_for(sid)
    lock = SessionLock(path).acquire(sid)
    try:
        session, _ = Session.open(path, repair=True)
        try:
            scripted = state.script is not None or (state.model is None and session.header.script)
            model = state.model or ("offline" if scripted else session.header.model)
            settings = load_settings(state.cwd, state.env, {"model": model})
            cfg = context_settings(settings)
            profile = profile_for(model)
            plan = prepare_compaction(session.messages, 0, lambda m: estimate_message(m, profile))
            if plan is None:
                return None
            before = _tokens(session, profile)
            summary_model = cfg.summary_model or model
            provider = provider_factory(summary_model, env=state.env, base_url=settings.base_url)
            local = is_local(endpoint_of(summary_model, state.env, settings.base_url))
            summary, source, _ = await summarise(provider, summary_model, plan, use_model=not scripted,
                                                 timeout_s=cfg.summary_timeout_s, local=local)
            if scripted:
                source = "fallback: the deterministic summary (a --script chat)"
            message = render_summary(summary, plan.meta)
            replaced = sum(estimate_message(m, profile) for m in plan.head)
            if estimate_message(message, profile) >= replaced:
                # A short conversation summarised is longer than itself: compacting would cost room, not
                # make it (and lose the verbatim turns for nothing).
                return Compacted(before, before + round(estimate_message(message, profile) - replaced),
                                 len(plan.head), source, kept=True)
            archive = state_dir(state.cwd, state.env) / "sessions" / sid / "compacted" / f"{plan.meta.number:03d}.jsonl"
            write_atomic(archive, "".join(m.model_dump_json() + "\n" for m in plan.head))
            session.rewrite([message, *plan.tail])
            return Compacted(before, _tokens(session, profile), len(plan.head), source)
        finally:
            session.close()
    finally:
        lock.release()

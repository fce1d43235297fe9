"""`/compact`: compact the chat's session now, between turns, through the engine's one compaction path
(`engine/context/compactor.py`: the clean cut, the summariser or its deterministic fallback, the work
log's records, the archive of the replaced head) — keeping only the last turn verbatim, since the
user wants the room now. The summariser's tokens and cost count in the chat's totals (`/cost`)."""

from __future__ import annotations

from typing import Any


async def compact_now(state: Any, provider_factory: Any) -> Any:
    """Compact `state.session_id` (a `StoredCompaction`, its cost recorded on `state`); None when there
    is nothing before the last turn to summarise."""
    from arreio.engine.context.compactor import compact_stored
    from arreio.engine.session.file import Session

    store = state.store()
    sid = state.session_id
    path = store.path_for(sid)
    scripted = state.script is not None
    if state.model is None and not scripted:
        looked, _ = Session.open(path, repair=False)
        looked.close()
        scripted = bool(looked.header.script)
        model = "offline" if scripted else looked.header.model
    else:
        model = state.model or "offline"
    done = await compact_stored(
        path, sid, cwd=state.cwd, env=state.env, model=model, scripted=scripted, provider_factory=provider_factory
    )
    if done is not None:
        state.record_compaction(done)
    return done

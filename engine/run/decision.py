"""A person's decision on the call a paused run waits on (`arreio approve`), written before the run is
resumed: the run is prepared once — config, model, script, plan, the session healed and locked, the
run's one redactor — so a run that could not go on keeps its approval, and the decision reaches the
session (and the audit journal) through that redactor, under the session's lock."""

from __future__ import annotations

from dataclasses import dataclass

from arreio.engine.core.errors import UsageError
from arreio.engine.core.ids import iso_ms
from arreio.engine.core.paths import state_dir
from arreio.engine.governance.approvals import ASK_LIMIT, PendingCall, decide_pending, describe_call, waiting_call, who
from arreio.engine.run.prepare import PipelineDeps, RunOptions, prepare
from arreio.engine.session.file import Session
from arreio.engine.session.store import SessionStore
from arreio.engine.walls.audit import AuditJournal, digest


@dataclass
class Decision:
    session_id: str
    pending: PendingCall
    status: str  # "approved" or "denied"
    by: str
    at: str


def decide(options: RunOptions, deps: PipelineDeps, *, approve: bool, reason: str = "") -> Decision:
    """Approve (or deny) the call `options.resume` waits on. Nothing waiting, a decision already made,
    a sub-agent's session, a call too long to have been shown whole (to approve), or a run that cannot
    be resumed: a UsageError (or the preparing run's error) and nothing written. The lock is released
    after: the resumed run (`run_pipeline(options)`) takes it again."""
    store = SessionStore(state_dir(options.cwd, options.env) / "sessions")
    sid = store.resolve(options.resume or "")
    options.resume = sid
    looked, _ = Session.open(store.path_for(sid), repair=False)
    looked.close()
    if parent := looked.header.parent:  # its parent went on without it
        raise UsageError(f"{sid} is a sub-agent's session: the sub-agent already ended; its parent session is {parent}")
    waiting = waiting_call(looked)  # nothing waiting (or already decided): say so first
    if approve and len(describe_call(waiting.name, waiting.arguments)) > ASK_LIMIT:
        raise UsageError(
            f"session {sid}: the waiting {waiting.name} call is too long to have been shown whole "
            f"(over {ASK_LIMIT:,} characters); refuse it with `arreio approve {sid} --deny`"
        )
    run = prepare(options, deps)  # everything the resumed run needs, checked before the decision is written
    try:
        by, at = who(dict(options.env)), iso_ms(deps.clock.now())
        pending = decide_pending(run.session, approve=approve, by=by, at=at, reason=reason)
        status = "approved" if approve else "denied"
        AuditJournal(run.ctx.state_dir, deps.clock, redactor=run.ctx.redactor).append(
            "approval",
            {
                "session_id": sid,
                "call_id": pending.call_id,
                "name": pending.name,
                "status": status,
                "by": by,
                "at": at,
                "reason": reason,
                "args_digest": digest(pending.arguments),
            },
        )
    finally:
        run.session.close()
        if run.lock is not None:
            run.lock.release()
    return Decision(sid, pending, status, by, at)

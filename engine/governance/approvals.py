"""Approvals: sensitive calls pause the run until a person decides.

Decisions live in the session as lines of their own, so a pause survives anything that can happen
to the process between the pause and the decision:

    {"type":"approval","call_id":"call_0_1","name":"shell","status":"pending","by":"arreio","at":"…","reason":"…"}

`status` is `pending` (the run paused before the call), `approved` or `denied`. When an approved call
begins, a `{"type":"call_started","call_id":…}` line follows, so a crash mid-call never runs it twice.
The latest line for a call id wins. The session loader keeps calls that wait on a decision open (no
`interrupted` result, `engine/session/healing.py`), and a resumed run executes exactly those calls first
(`Session.pending_calls`): approved → the call runs, once, under its own id; denied → the model gets the
denial as its result.

`arreio approve <session>` records the decision (`decide`) and resumes through the one pipeline.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arreio.engine.core import events as ev
from arreio.engine.core.errors import UsageError
from arreio.engine.core.ids import iso_ms
from arreio.engine.core.ports import process_env
from arreio.engine.loop.hooks import Ask, Deny, Pause, Rewrite, RunHook, Turn
from arreio.engine.session.healing import check_pairing, heal
from arreio.engine.walls.audit import AuditJournal, digest
from arreio.engine.walls.policy import decide
from arreio.engine.walls.settings import GovernanceSettings

if TYPE_CHECKING:
    from arreio.engine.core.messages import ToolCallPart
    from arreio.engine.core.model_io import ModelRequest
    from arreio.engine.session.file import Session
    from arreio.engine.tools.run_context import RunContext

RECORD = "approval"
STARTED = "call_started"  # an approved call began: killed now, it is closed as interrupted, not re-run


def latest_decisions(
    extra: list[dict[str, Any]], out: dict[str, dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """call id → its latest approval record (`out`: the decisions of the records before these)."""
    out = {} if out is None else out
    for record in extra:
        if record.get("type") == RECORD and isinstance(record.get("call_id"), str):
            out[record["call_id"]] = record
    return out


class DecisionsRead:
    """`latest_decisions` of each session's records, kept as records are appended: each look reads
    only the records appended since the last one (a run with `--yes` looks once per
    sensitive call, and reading every record of a long session each time made that O(history)).
    A session's `extra` only grows, and what it holds never changes (`records.freeze`)."""

    def __init__(self) -> None:
        self._read: dict[str, tuple[list[dict[str, Any]], int, dict[str, dict[str, Any]]]] = {}

    def of(self, session: Session) -> dict[str, dict[str, Any]]:
        extra = session.extra
        known = self._read.get(session.id)
        if known is None or known[0] is not extra or known[1] > len(extra):
            known = (extra, 0, {})  # another session object (reloaded), or a list replaced: read it whole
        decisions = latest_decisions(extra[known[1] :], known[2])
        self._read[session.id] = (extra, len(extra), decisions)
        return decisions


def record(
    call_id: str, name: str, status: str, by: str, at: str, reason: str = "", *, args_digest: str = ""
) -> dict[str, Any]:
    """One decision line. `args_digest` binds it to the call's arguments: a decision is about exactly
    the call that was shown, so a call whose arguments changed since is not covered by it."""
    out = {"type": RECORD, "call_id": call_id, "name": name, "status": status, "by": by, "at": at, "reason": reason}
    if args_digest:
        out["args_digest"] = args_digest
    return out


# A call is shown whole, never cut: what a person approves is exactly what they saw. One longer than
# this is not put to a person at all (denied, and the model told to split it): nobody reads it all.
ASK_LIMIT = 50_000
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def describe_call(name: str, arguments: dict[str, Any]) -> str:
    """What a call would do, as a person deciding on it needs to see it — all of it: the command line
    of a shell call (its line breaks kept), the path (and size) of a write or an edit, else the tool's
    arguments. For a line of its own, see `one_line`."""
    command, path = arguments.get("command"), arguments.get("path")
    if name == "shell" and isinstance(command, str):
        return f"$ {command}"
    if name == "write_file" and isinstance(path, str):
        return f"write {one_line(path)} ({len(str(arguments.get('content', '')))} chars)"
    if name == "edit_file" and isinstance(path, str):
        return (
            f"edit {one_line(path)}: replace {json.dumps(arguments.get('old', ''), ensure_ascii=False)} "
            f"with {json.dumps(arguments.get('new', ''), ensure_ascii=False)}"
        )
    return f"{name} {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}"


def one_line(text: str) -> str:
    """`text` on one line and still faithful: with a line break or another control character in it,
    every one is escaped as JSON escapes it (a backslash doubled too), so a command of two lines reads
    `echo a\\nrm -rf x`, never `echo a rm -rf x`; a text without any is left as it is."""
    return text if _CONTROL.search(text) is None else json.dumps(text, ensure_ascii=False)[1:-1]


def who(env: dict[str, str] | None = None) -> str:
    """The person deciding, as the OS knows them."""
    env = dict(process_env() if env is None else env)
    try:
        return env.get("USER") or env.get("USERNAME") or getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def command_to_continue(session_id: str) -> str:
    return f"arreio approve {session_id}"


@dataclass
class PendingCall:
    call_id: str
    name: str
    arguments: dict[str, Any]
    record: dict[str, Any]


def pending_call(session: Session) -> PendingCall | None:
    """The call the session waits on: unanswered, at the tail, latest decision `pending`."""
    decisions = latest_decisions(session.extra)
    answered = {m.tool_result_part.call_id for m in session.messages if m.role == "tool" and m.tool_result_part}
    for message in reversed(session.messages):
        if message.role == "assistant":
            for call in message.tool_calls:
                rec = decisions.get(call.id)
                if call.id not in answered and rec is not None and rec.get("status") == "pending":
                    return PendingCall(call.id, call.name, dict(call.arguments), rec)
            return None
        if message.role != "tool":
            return None
    return None


def decide_pending(session: Session, *, approve: bool, by: str, at: str, reason: str = "") -> PendingCall:
    """Record a person's decision on the call the session waits on. Nothing pending (or already
    decided) is a UsageError (exit 2): a decision is made once."""
    pending = waiting_call(session)
    status = "approved" if approve else "denied"
    session.append_record(
        record(pending.call_id, pending.name, status, by, at, reason, args_digest=digest(pending.arguments))
    )
    return pending


def waiting_call(session: Session) -> PendingCall:
    """The call the session waits on, or a UsageError saying why there is none."""
    pending = pending_call(session)
    if pending is None:
        decided = [r for r in latest_decisions(session.extra).values() if r.get("status") != "pending"]
        if decided:
            last = decided[-1]
            raise UsageError(
                f"session {session.id} has no call waiting for approval: {last.get('name')} ({last['call_id']}) "
                f"was already {last.get('status')} by {last.get('by')} at {last.get('at')}"
            )
        raise UsageError(f"session {session.id} has no call waiting for approval")
    shown = pending.record.get("args_digest")
    if shown and shown != digest(pending.arguments):
        raise UsageError(
            f"session {session.id}: the {pending.name} call waiting for approval is not the one that was paused "
            "(its arguments changed in the session file since); nothing was decided — see "
            f"`arreio sessions show {session.id}`"
        )
    return pending


class ApprovalHook(RunHook):
    """Pauses before sensitive calls; applies recorded decisions on resume."""

    name = "approvals"

    def __init__(
        self,
        settings: GovernanceSettings,
        ctx: RunContext,
        journal: AuditJournal,
        denied: set[str],
        audit_error: Callable[[Exception], None],
    ) -> None:
        self.settings = settings
        self.ctx = ctx
        self.journal = journal
        self.denied = denied  # shared with the audit hook: denied calls are journaled as "denied"
        self.decisions: list[dict[str, Any]] = []  # what this run decided or applied (for the report)
        self._audit_error = audit_error
        self._checked_history = False
        self._recorded = DecisionsRead()

    async def before_model(self, turn: Turn, request: ModelRequest) -> Rewrite | None:
        if not self._checked_history:
            self._checked_history = True
            return self._supersede(turn)
        return None

    def _supersede(self, turn: Turn) -> Rewrite | None:
        """A paused session resumed with a new instruction: the waiting calls will not run. They get
        `interrupted` results (pairing stays whole) and their approval is closed as denied."""

        session = turn.session
        if not check_pairing(session.messages):
            return None
        healed, _ = heal(session.messages)
        waiting = latest_decisions(session.extra)
        at = iso_ms(self.ctx.clock.now())
        session.rewrite(healed)
        for call_id, rec in waiting.items():
            if rec.get("status") == "pending":
                session.append_record(
                    record(call_id, rec.get("name", ""), "denied", "arreio", at, "superseded by a new instruction")
                )
        return Rewrite(messages=list(session.messages))  # the request was assembled before this fix

    async def before_tool(self, turn: Turn, call: ToolCallPart) -> Deny | Pause | Ask | None:
        tool = turn.tools.get(call.name)
        verdict = decide(
            self.settings,
            call.name,
            call.arguments,
            tool_sensitive=bool(getattr(tool, "sensitive", False)),
            cwd=self.ctx.cwd,
            env=self.ctx.env,
            state=self.ctx.state_dir,
            cwd_resolved=True,
        )
        if verdict.action == "allow":
            return None
        at = iso_ms(self.ctx.clock.now())
        if verdict.action == "deny":
            # A protected path's refusal says itself ("refused: .git/ is …"); a rule's says which rule.
            said = verdict.reason if verdict.reason.startswith("refused: ") else f"denied by {verdict.reason}"
            return self._deny(turn, call, "policy", at, verdict.reason, said)
        recorded = self._recorded.of(turn.session).get(call.id)
        status = recorded.get("status") if recorded else None
        args_digest = digest(call.arguments)
        if status == "approved" and recorded.get("args_digest", args_digest) != args_digest:
            status = None  # approved was a call with other arguments: this one is asked about afresh
        if status == "approved":
            self._note(
                turn,
                call,
                "approved",
                recorded.get("by", ""),
                recorded.get("at", at),
                recorded.get("reason", ""),
                journal=False,
            )
            # At most once: from here the call counts as started. Killed mid-call, the loader closes it
            # as interrupted instead of keeping it open, so a resume never runs it a second time.
            turn.session.append_record({"type": STARTED, "call_id": call.id, "name": call.name, "at": at})
            return None
        if status == "denied":
            why = recorded.get("reason") or "no reason given"
            return self._deny(
                turn,
                call,
                recorded.get("by", ""),
                recorded.get("at", at),
                why,
                f"denied by {recorded.get('by')}: {why}",
                journal=False,
            )
        if self.ctx.approve_all:
            self._note(turn, call, "approved", "--yes", at, "approved for this run with --yes")
            return None
        if self.ctx.ask is None and turn.session.header.parent:
            # A sub-agent cannot pause: its parent goes on without it, so a later approval would run
            # the call after the fact, for nobody. It is told, and says so in its answer.
            return self._deny(
                turn,
                call,
                "arreio",
                at,
                "a sub-agent cannot wait for approval",
                f"not run: {call.name} needs a person's approval, which a sub-agent cannot wait "
                "for; say in your answer what you would have run, so the agent that called you "
                "can do it",
            )
        shown = describe_call(call.name, call.arguments)
        if len(shown) > ASK_LIMIT:
            return self._deny(
                turn,
                call,
                "arreio",
                at,
                "too long to show a person",
                f"not run: this {call.name} call is {len(shown):,} characters long, more than a person "
                f"can read to approve it (at most {ASK_LIMIT:,}); split it into shorter calls",
            )
        event = ev.ApprovalRequired(
            session_id=turn.session.id,
            call_id=call.id,
            name=call.name,
            arguments=dict(call.arguments),
            command=command_to_continue(turn.session.id),
            summary=shown,
            reason=verdict.reason,
        )
        if self.ctx.ask is not None:  # a person is there: shown first (the runner yields it), then asked
            return Ask(event, lambda: self._asked(turn, call, event, args_digest))
        if status != "pending":
            turn.session.append_record(
                record(call.id, call.name, "pending", "arreio", at, verdict.reason, args_digest=args_digest)
            )
            self._note(turn, call, "pending", "arreio", at, verdict.reason)
        sid = turn.session.id
        line = one_line(shown)
        escaped = " (written on one line: \\n is a line break)" if line != shown else ""
        message = (
            f"paused: {call.name} needs approval ({verdict.reason}): {line}{escaped} — approve with "
            f"`{command_to_continue(sid)}` or refuse with `{command_to_continue(sid)} --deny`"
        )
        return Pause(event=event, message=message)

    def _asked(self, turn: Turn, call: ToolCallPart, event: ev.ApprovalRequired, args_digest: str) -> Deny | None:
        """A person's answer at the terminal. Ctrl-C at the question cancels the run (the call is not
        run; the session stays resumable): the ask may raise KeyboardInterrupt or CancelledError."""
        assert self.ctx.ask is not None
        try:
            approved = bool(self.ctx.ask(event))
        except KeyboardInterrupt:
            raise asyncio.CancelledError("cancelled at the approval prompt") from None
        at = iso_ms(self.ctx.clock.now())
        # Who answered, as the journal and the model are told: the ask may name itself (a policy that
        # answers for a door no person watches); otherwise it is the person at the terminal.
        by = getattr(self.ctx.ask, "by", None) or f"{who(dict(self.ctx.env))} (terminal)"
        turn.session.append_record(
            record(call.id, call.name, "approved" if approved else "denied", by, at, args_digest=args_digest)
        )
        if approved:
            self._note(turn, call, "approved", by, at, "")
            return None
        return self._deny(turn, call, by, at, "", f"denied by {by}")

    def _deny(
        self, turn: Turn, call: ToolCallPart, by: str, at: str, reason: str, content: str, *, journal: bool = True
    ) -> Deny:
        self.denied.add(call.id)
        self._note(turn, call, "denied", by, at, reason, journal=journal)
        return Deny(content)

    def _note(
        self, turn: Turn, call: ToolCallPart, status: str, by: str, at: str, reason: str, *, journal: bool = True
    ) -> None:
        entry = {"call_id": call.id, "name": call.name, "status": status, "by": by, "at": at, "reason": reason}
        self.decisions.append(entry)
        if journal:
            try:
                self.journal.append(
                    "approval",
                    {
                        **entry,
                        "run_id": self.ctx.run_id,
                        "session_id": turn.session.id,
                        "args_digest": digest(call.arguments),
                    },
                )
            except OSError as error:
                self._audit_error(error)

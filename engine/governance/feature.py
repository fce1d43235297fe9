"""`GovernanceFeature`: ceilings, approvals, the audit journal, request records and the partial
result, wired into every run through the Feature hooks (registered in `cli/deps.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from arreio.engine.core import events as ev
from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.paths import display_path
from arreio.engine.governance.approvals import ApprovalHook
from arreio.engine.governance.ceilings import CeilingsHook
from arreio.engine.governance.requests import RequestRecorder, last_request_model
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import RunHook, Turn, WarningsHook
from arreio.engine.loop.report import GovernanceSection, unsaid
from arreio.engine.tools.run_context import RunContext
from arreio.engine.walls.audit import AuditJournal, digest
from arreio.engine.walls.policy import rule_warnings
from arreio.engine.walls.redact import Redactor
from arreio.engine.walls.settings import governance_settings

if TYPE_CHECKING:
    from arreio.engine.core.messages import ToolCallPart
    from arreio.engine.core.model_io import Usage
    from arreio.engine.loop.report import RunReport
    from arreio.engine.tools.base import ToolResult
    from arreio.engine.tools.resolved import ResolvedTools


class RedactResults(RunHook):
    """Secrets a tool printed (`echo $MY_API_KEY`) are redacted before the result enters the history:
    the model's provider never receives them, and neither do later hooks' records (work logs, artifacts)."""

    name = "redact"

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    def transform_result(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> ToolResult:
        clean = self.redactor.text(result.content)
        full = self.redactor.text(result.full) if result.full is not None else None
        if clean == result.content and full == result.full:
            return result

        return replace(result, content=clean, full=full)


class AuditHook(RunHook):
    """One journal entry per executed (or refused) tool call, and one when the model changes."""

    name = "audit"

    def __init__(self, state: _RunState) -> None:
        self.state = state
        self._first = True

    def after_model(self, turn: Turn, usage: Usage) -> list[ev.Event]:
        if self._first:
            self._first = False
            before = last_request_model(turn.session.extra) or turn.session.header.model
            if before != turn.model:
                self.state.journal_entry(
                    "model_switch", {"from": before, "to": turn.model, "session_id": turn.session.id}
                )
        return []

    def after_tool(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> list[ev.Event]:
        status = "denied" if call.id in self.state.denied else ("error" if result.is_error else "ok")
        self.state.journal_entry(
            "tool_call",
            {
                "session_id": turn.session.id,
                "call_id": call.id,
                "name": call.name,
                "args_digest": digest(call.arguments),
                "status": status,
            },
        )
        return []


@dataclass
class _RunState:
    ctx: RunContext
    journal: AuditJournal
    redactor: Redactor
    partial_path: str
    denied: set[str] = field(default_factory=set)
    ceiling: Any = None  # the last `ceiling` event
    audit_errors: list[str] = field(default_factory=list)
    ceilings: CeilingsHook | None = None
    approvals: ApprovalHook | None = None
    recorder: RequestRecorder | None = None

    def journal_entry(self, kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        try:  # the journal never changes a run's verdict; a failure to write it is reported
            return self.journal.append(kind, {"run_id": self.ctx.run_id, **payload})
        except OSError as error:
            self.note_audit_error(error)
            return None

    def note_audit_error(self, error: Exception) -> None:
        self.audit_errors.append(f"audit journal not written: {type(error).__name__}: {error}")


class GovernanceFeature(Feature):
    name = "governance"

    def check(self, ctx: RunContext) -> None:
        ctx.section(governance_settings)

    def __init__(self) -> None:
        # a started run's (`start`): its state once hooked, what the rules' check found (once), and
        # what of that is not yet yielded as `warning` events
        self._run: _RunState | None = None
        self._rule_warnings: list[str] | None = None
        self._pending: list[str] = []

    def start(self, ctx: RunContext) -> GovernanceFeature:
        return GovernanceFeature()

    def tools_resolved(self, ctx: RunContext, resolved: ResolvedTools) -> None:
        """A policy rule naming no tool of the run does nothing, silently; say so once per run."""
        if self._rule_warnings is not None:
            return
        known = [*resolved.names(), *resolved.unavailable]  # unavailable: real tools, not typos
        self._rule_warnings = rule_warnings(ctx.section(governance_settings), known)
        self._pending = list(self._rule_warnings)

    def _drain(self) -> list[str]:
        out, self._pending = self._pending, []
        return out

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        settings = ctx.section(governance_settings)
        redactor = ctx.redactor  # the run's one redactor
        partial = display_path(ctx.state_dir / "runs" / ctx.run_id / "partial.md", ctx.cwd)
        state = _RunState(ctx, AuditJournal(ctx.state_dir, ctx.clock, redactor=redactor), redactor, partial)
        state.journal.durable = ctx.settings.fsync  # `fsync: false` covers every writer
        state.ceilings = CeilingsHook(settings, partial_path=partial, session_id=ctx.session_id)
        state.approvals = ApprovalHook(settings, ctx, state.journal, state.denied, state.note_audit_error)
        state.recorder = RequestRecorder(ctx.run_id, ctx.clock, redactor)
        self._run = state
        warnings = WarningsHook(self._drain, "policy")
        # Ceilings first: a call over a ceiling is refused before anyone is asked to approve it.
        return [state.ceilings, state.approvals, RedactResults(redactor), AuditHook(state), state.recorder, warnings]

    def on_event(self, ctx: RunContext, event: Any) -> None:
        state = self._run
        if state is None:
            return
        kind = getattr(event, "type", "")
        if kind == "ceiling":
            state.ceiling = event
        elif kind == "run_start":
            state.journal_entry(
                "run_start", {"session_id": event.session_id, "model": event.model, "resumed": event.resumed}
            )
        elif kind == "gate_result":
            state.journal_entry("gate", {"gate": event.gate, "passed": event.passed, "detail": event.detail})
        elif kind == "model_switch":  # a fallback model took over (engine/loop/fallback.py)
            state.journal_entry(
                "model_switch",
                {
                    "session_id": ctx.session_id,
                    "from": event.from_model,
                    "to": event.to_model,
                    "reason": event.reason,
                    "fallback": True,
                    "agent": event.agent,
                },
            )
        elif kind == "learning_pass_done":
            state.journal_entry(
                "learning",
                {"applied": event.applied, "rejected": event.rejected, "failed": event.failed, "error": event.error},
            )

    def after_run(self, ctx: RunContext, report: RunReport) -> GovernanceSection | None:
        state, self._run = self._run, None
        if state is None:
            return None
        ceiling: dict[str, Any] | None = None
        if state.ceiling is not None:
            c = state.ceiling
            ceiling = {"kind": c.kind, "limit": c.limit, "value": c.value, "message": c.message}
        elif state.ceilings is not None and state.ceilings.stalls:
            # A model call that stayed silent through every retry: the run failed, the stall is why.
            stall = state.ceilings.stalls[-1]
            ceiling = {
                "kind": "stall",
                "limit": stall.seconds,
                "value": stall.seconds,
                "message": f"{stall.what} gave no signal for {stall.seconds:g} s",
            }
        approvals = tuple(state.approvals.decisions) if state.approvals is not None else ()
        partial_path = self._write_partial(ctx, state, report) if report.verdict == "partial" else None
        warnings = list(unsaid(report.warnings, state.ceilings.warnings)) if state.ceilings is not None else []
        end = state.journal_entry(
            "run_end",
            {
                "session_id": report.session_id,
                "verdict": report.verdict,
                "exit_code": report.exit_code,
                "model": report.model,
                "cost_usd": report.cost_usd,
                "input_tokens": report.input_tokens,
                "output_tokens": report.output_tokens,
                "steps": report.steps,
                "tool_calls": report.tool_calls,
            },
        )
        # an anchor outside the journal: `audit verify` notices a cut-off tail
        audit_head = {"seq": end["seq"], "hash": end["hash"]} if end is not None else None
        warnings += state.audit_errors
        rules, self._rule_warnings, self._pending = self._rule_warnings or [], None, []
        warnings += unsaid([*report.warnings, *warnings], rules)
        return GovernanceSection(
            ceiling=ceiling,
            approvals=approvals,
            audit_head=audit_head,
            partial_path=partial_path,
            warnings=tuple(warnings),
        )

    def _write_partial(self, ctx: RunContext, state: _RunState, report: RunReport) -> str:
        """The partial result is never thrown away: the reserve turn's answer, as a file."""

        path = ctx.state_dir / "runs" / ctx.run_id / "partial.md"
        body = report.final_text.strip() or "(the model gave no final answer before the ceiling)"
        text = (
            f"# Partial result — {report.goal or report.session_id}\n\n"
            f"{report.message}\n\nrun {report.run_id} · session {report.session_id}\n\n---\n\n{body}\n"
        )
        write_atomic(path, state.redactor.text(text), durable=ctx.settings.fsync)
        return state.partial_path

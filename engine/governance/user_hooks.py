"""`UserHooksFeature`: the user's hook commands (engine/walls/hook_settings.py) at the moments of
every run, whatever door it came through — `run`, each message of `chat`, each attempt of `batch`,
the resume after `approve` — because every one of them goes through the one conveyor.

- `pre_tool_use`: before a call runs (before anyone is asked to approve it). Exit 2, or stdout
  `{"decision": "block", "reason": "…"}`, refuses the call; the model reads the reason as the call's
  error. A hook that times out or cannot start refuses it too (a guard that did not answer); another
  exit code is a warning and the call runs.
- `post_tool_use`: after a call that succeeded. `{"additionalContext": "…"}` on stdout, or the stderr
  of an exit 2, is added to the result the model reads.
- `user_prompt_submit`: before the first model call of a run with a new instruction. Exit 2 (or a
  block decision) ends the run before the model is asked (verdict failed, exit 1); stdout adds context.
- `session_start`: when a new session is made; stdout enters the system prompt as a volatile block.
- `stop`: when the run has ended (its verdict is final); its output is not read.

Every hook run is one `hook` entry in the audit journal; a failing hook is a `warning`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arreio.engine.core.messages import Message
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import Deny, Rewrite, RunHook, Stop, Turn, WarningsHook
from arreio.engine.loop.report import Section, unsaid
from arreio.engine.tools.run_context import RunContext
from arreio.engine.walls.audit import AuditJournal
from arreio.engine.walls.hook_process import HookRun, hook_env, run_hook, run_hook_sync
from arreio.engine.walls.hook_settings import FILE, HookSpec, HooksSettings, check_programs, hook_settings

if TYPE_CHECKING:
    from arreio.engine.core.messages import ToolCallPart
    from arreio.engine.core.model_io import ModelRequest
    from arreio.engine.core.ports import SystemPromptBlockSource
    from arreio.engine.loop.report import RunReport
    from arreio.engine.tools.base import ToolResult

_STATE = "user-hooks"  # the per-run key of `_Hooks`


def _sandbox_roots(ctx: RunContext) -> list[str]:
    from arreio.engine.tools.sandbox import sandbox_settings

    return list(ctx.section(sandbox_settings).writable_roots)


@dataclass
class _Hooks:
    """One run's hooks: the settings, each hook's program as found at the start, the journal."""

    ctx: RunContext
    settings: HooksSettings
    programs: dict[tuple[str, int], str]
    warnings: list[str] = field(default_factory=list)
    journal: AuditJournal | None = None

    @classmethod
    def of(cls, ctx: RunContext) -> _Hooks:
        def make() -> _Hooks:
            settings = ctx.section(hook_settings)
            programs = check_programs(settings, ctx.cwd, ctx.env, ctx.state_dir, _sandbox_roots(ctx))
            return cls(ctx, settings, programs)

        return ctx.per_run(_STATE, make)

    def chosen(self, moment: str, subject: str) -> list[tuple[int, HookSpec]]:
        return [(i, spec) for i, spec in enumerate(self.settings.at(moment)) if spec.matches(subject)]

    def argv(self, moment: str, index: int, spec: HookSpec, file: str | None) -> list[str] | None:
        """The words to run: the program as found at the start, `{file}` filled (None: the hook names a
        file and the call names none)."""
        words = [self.programs[(moment, index)], *spec.command[1:]]
        if any(FILE in w for w in words):
            if file is None:
                return None
            words = [w.replace(FILE, file) for w in words]
        return words

    def base(self, moment: str) -> dict[str, Any]:
        ctx = self.ctx
        return {"hook_event_name": moment, "session_id": ctx.session_id, "run_id": ctx.run_id, "cwd": str(ctx.cwd)}

    async def run(
        self, moment: str, index: int, spec: HookSpec, payload: dict[str, Any], file: str | None = None
    ) -> HookRun | None:
        argv = self.argv(moment, index, spec, file)
        if argv is None:
            return None
        env, fds, call, sandbox = self._env(moment), (), None, None
        if spec.sandbox:
            from arreio.engine.tools.sandbox import run_sandbox
            from arreio.engine.walls.hook_process import sandboxed_argv

            sandbox = run_sandbox(self.ctx)
            call = sandbox.start()
            boxed = sandboxed_argv(call, argv, self.ctx.env, sandbox.writable) if call.plan is not None else None
            if boxed is None:
                sandbox.finish(call)
                outcome = HookRun(None, error="it asks for the sandbox, which cannot run here")
                self.record(moment, spec, outcome, payload)
                return outcome
            argv, env, fds = boxed, {**call.env, "ARREIO_HOOK_EVENT": moment}, call.pass_fds
        try:
            outcome = await run_hook(
                argv, payload, cwd=self.ctx.cwd, env=env, timeout_s=self.settings.timeout(spec), pass_fds=fds
            )
        finally:
            if sandbox is not None and call is not None:
                sandbox.finish(call)
        self.record(moment, spec, outcome, payload)
        return outcome

    def run_sync(self, moment: str, index: int, spec: HookSpec, payload: dict[str, Any]) -> HookRun | None:
        argv = self.argv(moment, index, spec, None)
        if argv is None:
            return None
        # (`sandbox: true` is refused for these moments when config is read)
        outcome = run_hook_sync(
            argv, payload, cwd=self.ctx.cwd, env=self._env(moment), timeout_s=self.settings.timeout(spec)
        )
        self.record(moment, spec, outcome, payload)
        return outcome

    def _env(self, moment: str) -> dict[str, str]:
        return hook_env(self.ctx.env, self.ctx.cwd, moment, self.settings.env_passthrough, _sandbox_roots(self.ctx))

    def record(self, moment: str, spec: HookSpec, outcome: HookRun, payload: dict[str, Any]) -> None:
        # A block is an answer, not a failure (post_tool_use: "tell the model"); where nothing can be
        # blocked (the session's start, the run's end), an exit 2 is a failure like any other.
        failed = outcome.outcome in ("error", "timeout", "not_run")
        if failed or (outcome.blocked and moment in ("session_start", "stop")):
            self.warnings.append(f"{moment} hook `{spec.shown}` ({spec.source}): {outcome.problem()}")
        ctx = self.ctx
        if self.journal is None:
            self.journal = AuditJournal(ctx.state_dir, ctx.clock, redactor=ctx.redactor)
            self.journal.durable = ctx.settings.fsync
        entry = {
            "run_id": ctx.run_id,
            "session_id": ctx.session_id,
            "moment": moment,
            "command": spec.shown,
            "source": spec.source,
            "exit_code": outcome.exit_code,
            "outcome": outcome.outcome,
        }
        for key in ("tool_name", "call_id", "verdict"):
            if key in payload:
                entry[key] = payload[key]
        try:  # the journal never changes what a run does
            self.journal.append("hook", entry)
        except OSError as error:
            self.warnings.append(f"audit journal not written: {type(error).__name__}: {error}")

    def drain(self) -> list[str]:
        out, self.warnings = self.warnings, []
        return out


def _file_of(ctx: RunContext, call: ToolCallPart) -> str | None:
    """The absolute path of the file a call names, when it names one inside the working directory."""
    path = call.arguments.get("path") if isinstance(call.arguments, dict) else None
    if not isinstance(path, str) or not path:
        return None
    try:
        target = (ctx.cwd / path).resolve()
    except (OSError, RuntimeError):
        return None
    return str(target) if target != ctx.cwd and target.is_relative_to(ctx.cwd) else None


class _ToolHooks(RunHook):
    """pre_tool_use, post_tool_use and user_prompt_submit for one runner."""

    name = "user-hooks"

    def __init__(self, hooks: _Hooks) -> None:
        self.hooks = hooks
        self.prompted = False

    async def before_model(self, turn: Turn, request: ModelRequest) -> Stop | Rewrite | None:
        if self.prompted or turn.agent:
            return None
        self.prompted = True
        last = turn.session.messages[-1] if turn.session.messages else None
        if last is None or last.role != "user" or not last.text:
            return None  # a resume that goes on with the history: no instruction was submitted
        payload = {**self.hooks.base("user_prompt_submit"), "prompt": last.text}
        grown = False
        for index, spec in self.hooks.chosen("user_prompt_submit", ""):
            outcome = await self.hooks.run("user_prompt_submit", index, spec, payload)
            if outcome is None:
                continue
            if outcome.blocked:
                why = outcome.reason or "no reason given"
                return Stop(
                    "failed", 1, f"the instruction was refused by a user_prompt_submit hook (`{spec.shown}`): {why}"
                )
            added = outcome.context or (outcome.stdout.strip() if outcome.exit_code == 0 and not outcome.reply else "")
            if added:
                turn.session.append(Message.user(f"[context from the hook `{spec.shown}`]\n{added}"))
                grown = True
        # The request was assembled before the added context: it is sent with it.
        return Rewrite(messages=list(turn.session.messages)) if grown else None

    async def before_tool(self, turn: Turn, call: ToolCallPart) -> Deny | None:
        payload = {
            **self.hooks.base("pre_tool_use"),
            "tool_name": call.name,
            "tool_input": call.arguments,
            "call_id": call.id,
        }
        file = _file_of(self.hooks.ctx, call)
        for index, spec in self.hooks.chosen("pre_tool_use", call.name):
            outcome = await self.hooks.run("pre_tool_use", index, spec, payload, file)
            if outcome is None:
                continue
            if outcome.blocked:
                why = outcome.reason or "no reason given"
                return Deny(f"Blocked by the user's pre_tool_use hook `{spec.shown}`: {why}")
            if outcome.timed_out or outcome.error:
                return Deny(
                    f"Not run: the user's pre_tool_use hook `{spec.shown}` did not answer ({outcome.problem()})."
                )
        return None

    async def amend_result(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> ToolResult:
        if result.is_error:
            return result
        chosen = self.hooks.chosen("post_tool_use", call.name)
        if not chosen:
            return result
        payload = {
            **self.hooks.base("post_tool_use"),
            "tool_name": call.name,
            "tool_input": call.arguments,
            "call_id": call.id,
            "tool_response": {"content": result.content, "is_error": result.is_error},
        }
        file = _file_of(self.hooks.ctx, call)
        notes: list[str] = []
        for index, spec in chosen:
            outcome = await self.hooks.run("post_tool_use", index, spec, payload, file)
            if outcome is None:
                continue
            said = outcome.context or (outcome.reason if outcome.blocked else "")
            if said:
                notes.append(f"[the hook `{spec.shown}` says] {said}")
        if not notes:
            return result
        redactor = self.hooks.ctx.redactor
        added = redactor.text("\n".join(notes)) if redactor is not None else "\n".join(notes)
        return replace(result, content=f"{result.content}\n\n{added}")


class _SessionContext:
    """What the session_start hooks printed, as a volatile block of the new session's prompt."""

    name = "hook_context"
    stable = False

    def __init__(self, text: str) -> None:
        self.text = text

    def render(self) -> str | None:
        return self.text or None


class UserHooksFeature(Feature):
    name = "hooks"

    def check(self, ctx: RunContext) -> None:
        _Hooks.of(ctx)  # a bad hook, or one whose program cannot be found safely, fails the run now

    def prompt_blocks(self, ctx: RunContext) -> list[SystemPromptBlockSource]:
        hooks = _Hooks.of(ctx)
        said: list[str] = []
        payload = {**hooks.base("session_start"), "source": "startup"}
        for index, spec in hooks.chosen("session_start", ""):
            outcome = hooks.run_sync("session_start", index, spec, payload)
            if outcome is not None and outcome.exit_code == 0:
                text = outcome.context or (outcome.stdout.strip() if not outcome.reply else "")
                if text:
                    said.append(text)
        return [_SessionContext("\n\n".join(said))] if said else []

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        hooks = _Hooks.of(ctx)
        if not hooks.programs:
            return []
        return [_ToolHooks(hooks), WarningsHook(hooks.drain, "hook")]

    def after_run(self, ctx: RunContext, report: RunReport) -> Section | None:
        hooks = _Hooks.of(ctx)
        payload = {
            **hooks.base("stop"),
            "verdict": report.verdict,
            "exit_code": report.exit_code,
            "message": report.message,
            "final_text": report.final_text[:4000],
            "report_path": str(Path(ctx.state_dir or ctx.cwd) / "runs" / ctx.run_id / "report.json"),
        }
        for index, spec in hooks.chosen("stop", report.verdict):
            hooks.run_sync("stop", index, spec, payload)
        return Section(warnings=unsaid(report.warnings, hooks.drain()))

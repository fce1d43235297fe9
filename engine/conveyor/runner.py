"""The turn loop: talk to the model until it says it is done (DESIGN.md section 3).

One step: assemble the request from the session's history → stream the reply (yielding deltas) with
the harness's retries → append the assistant message (stamped with its model) → if it asked for tools,
run them in declared order through the protection chain, appending each result → ask again. A unit
ends in `unit_end`, which carries its outcome: the stream ends in its result.

Cancellation (Ctrl-C) may land at any await: a reply still streaming is simply not recorded; a tool
round cut short gets `interrupted` results for the calls that did not finish, so the session keeps
pairing (DESIGN.md invariant 1) and resumes cleanly.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Sequence

from arreio.engine import events as ev
from arreio.engine.conveyor.outcome import Outcome
from arreio.engine.conveyor.reply import Reply, fold, fresh_text
from arreio.engine.conveyor.totals import Totals
from arreio.engine.conveyor.turn import TurnView
from arreio.engine.governance.watchdog import Watchdog
from arreio.engine.hooks import Ask, Deny, Hooks, Land, Pause, RunHook, Stop
from arreio.engine.messages import Message, ToolCallPart, ToolResultPart, interrupted_result, not_run_result
from arreio.engine.ports import Provider
from arreio.engine.providers.base import ModelRequest, SystemBlock, TextChunk, ThinkingChunk, Usage
from arreio.engine.providers.retry import decide_retry
from arreio.engine.run_context import RunContext
from arreio.engine.session.file import Session
from arreio.engine.tools.base import ToolResult
from arreio.engine.tools.chain import stream_tool
from arreio.engine.tools.registry import ToolRegistry

NOT_RUN_LATE = "not run: {name} was waiting for approval when a new instruction came; call it again if it is still needed"


class Runner:
    """Runs units of work against one session. `totals` are the run's counters (a sub-agent's
    runner shares its parent's); `agent` names the runner ("" for the run's own)."""

    def __init__(
        self, *, provider: Provider, model: str, session: Session, tools: ToolRegistry, ctx: RunContext,
        system: list[SystemBlock], hooks: Sequence[RunHook] | Hooks = (), rng: random.Random | None = None,
        totals: Totals | None = None, agent: str = "",
    ) -> None:
        self.provider, self.model, self.session, self.tools = provider, model, session, tools
        self.ctx, self.system, self.agent = ctx, system, agent
        self.settings, self.clock = ctx.settings, ctx.clock
        self.hooks = hooks if isinstance(hooks, Hooks) else Hooks(hooks)
        self.rng = rng or random.Random(0)
        self.totals = totals or Totals()
        self.watchdog = Watchdog.from_settings(ctx.settings)  # the outer bound: no signal for N s cuts a call off
        self.unit_steps = 0
        self.unit_limit = ctx.settings.max_steps
        self.last_request: ModelRequest | None = None  # the request as last sent, after every hook
        self._turn_usage = Usage()  # the last model call's usage, its retries included
        self.view = TurnView(self)

    def spawn(self, *, provider: Provider, model: str, session: Session, tools: ToolRegistry, agent: str) -> Runner:
        """A sub-agent's runner: same hooks, clock, settings and counters; its own session and tools."""
        ctx = self.ctx.for_session(session.id, session.path)
        return Runner(provider=provider, model=model, session=session, tools=tools, ctx=ctx, system=session.header.system,
                      hooks=self.hooks, rng=self.rng, totals=self.totals, agent=agent)

    # -- the loop -----------------------------------------------------------------------------
    async def run(
        self, user_text: str | None, *, unit_id: str = "main", max_steps: int | None = None,
        provider: Provider | None = None, model: str | None = None, tools: ToolRegistry | None = None,
    ) -> AsyncIterator[ev.Event]:
        """Run one unit; the last event is its `unit_end`. `user_text=None` continues the history as
        it stands (resume). `provider`, `model`, `tools`: this unit's own (a plan unit's)."""
        self.provider = self.provider if provider is None else provider
        self.model = self.model if model is None else model
        self.tools = self.tools if tools is None else tools
        self.unit_limit, self.unit_steps = max_steps or self.settings.max_steps, 0
        for event in self.hooks.at_unit_start(self.view):
            yield event
        if user_text is not None:
            # A call left waiting (for an approval) when a new instruction comes never ran: it is
            # answered as such, not healed later into "interrupted" (which says it may have run).
            self.session.append_many([*(Message.tool_result(ToolResultPart(
                call_id=c.id, name=c.name, is_error=True, status="error", content=NOT_RUN_LATE.format(name=c.name),
            )) for c in self.session.pending_calls()), Message.user(user_text)])
        outcome: Outcome | None = None
        pending = self.session.pending_calls() if user_text is None else []
        if pending:  # a round left waiting (an approval): finish it before asking the model again
            async for event in self._run_tools(pending):
                if isinstance(event, Outcome):
                    outcome = event
                else:
                    yield event
        landing: Land | None = None
        while outcome is None:
            if self.unit_steps >= self.unit_limit and landing is None:
                message = f"stopped after {self.unit_steps} model turns (max_steps {self.unit_limit})"
                if not self.session.header.parent:  # a sub-agent's parent decides
                    message += (f"; the session is saved — continue with "
                                f"`arreio run --resume {self.session.id} --max-steps N`")
                yield ev.Ceiling(kind="steps", limit=self.unit_limit, value=self.unit_steps, message=message)
                outcome = Outcome.of("partial", message, self.session.last_text())
                break
            request = self._request(with_tools=landing is None)
            decision = await self.hooks.before_model(self.view, request)
            if isinstance(decision, Stop):
                for event in decision.events:
                    yield event
                outcome = Outcome(decision.verdict, decision.exit_code, decision.message, self.session.last_text())
                break
            if isinstance(decision, Land) and landing is None:
                landing = decision
                yield ev.Ceiling(kind=decision.kind, limit=decision.limit, value=decision.value, message=decision.message)
                self.session.append(Message.user(decision.instruction))
                request = self._request(with_tools=False)
            self.unit_steps += 1
            self.totals.count_turn(self.agent)
            reply: Reply | Outcome | None = None
            async for event in self._ask(request):
                if isinstance(event, (Reply, Outcome)):
                    reply = event
                else:
                    yield event
            for event in self.hooks.after_model(self.view, self._turn_usage):
                yield event
            if isinstance(reply, Outcome):  # the model call failed for good
                outcome = Outcome(reply.verdict, reply.exit_code, reply.message, self.session.last_text())
                break
            assert reply is not None
            self.session.append(Message.assistant(reply.parts, model=self.model))
            if landing is not None:
                # The reserve turn is over whatever the model did: calls it still made are not run.
                if reply.calls:
                    self.session.append_many([not_run_result(c, "not run: the run reached a ceiling") for c in reply.calls])
                outcome = Outcome.of("partial", landing.message, reply.text or self.session.last_text())
            elif not reply.calls:
                outcome = Outcome.of("success", "", reply.text)
            else:
                async for event in self._run_tools(reply.calls):
                    if isinstance(event, Outcome):
                        outcome = event
                    else:
                        yield event
                if outcome is None:
                    for event in await self.hooks.after_tool_round(self.view):
                        yield event
        yield outcome.unit_end(unit_id, self.unit_steps)

    def _request(self, *, with_tools: bool = True) -> ModelRequest:
        return ModelRequest(
            model=self.model, system=self.system, messages=list(self.session.messages),
            tools=self.tools.specs() if with_tools else [], max_tokens=self.settings.max_tokens,
            session_id=self.session.id, thinking=self.settings.thinking_request,
        )

    # -- one model call, with the harness's retries ---------------------------------------------
    async def _ask(self, request: ModelRequest) -> AsyncIterator[ev.Event | Reply | Outcome]:
        """Stream the reply (deltas as they come), retrying what can be retried; ends with the folded
        `Reply`, or an `Outcome` when the call failed for good."""
        self.last_request = request
        self._turn_usage = request_usage = Usage()
        shown = ""  # text already shown to the user this step: a retried stream does not repeat it
        overflowed, attempt = False, 0
        while True:
            attempt += 1
            chunks, text = [], ""
            async for chunk in self.watchdog.stream(self.provider.stream(request)):
                chunks.append(chunk)
                if isinstance(chunk, TextChunk):
                    text += chunk.text
                    fresh, shown = fresh_text(shown, text, chunk.text)
                    if fresh:
                        yield ev.TextDelta(text=fresh)
                elif isinstance(chunk, ThinkingChunk) and chunk.text and not chunk.redacted:
                    yield ev.ThinkingDelta(text=chunk.text)
            reply = fold(chunks)
            request_usage = request_usage + reply.done.usage
            self._turn_usage = request_usage
            self.totals.add_usage(reply.done.usage)
            error = reply.done.error
            if error is None:
                yield reply
                return
            if error.kind == "context_overflow" and not overflowed:
                overflowed = True  # compact and retry once, then fail clearly
                shrunk = await self.hooks.on_context_overflow(self.view)
                if shrunk is not None:
                    for event in shrunk:
                        yield event
                    request.messages = list(self.session.messages)
                    continue
            decision = decide_retry(error, attempt, self.settings.retry, self.rng)
            if not decision.retry:
                yield Outcome.of("failed", decision.failure, auth=error.kind == "auth")
                return
            self.totals.retries += 1
            yield ev.Retry(attempt=attempt, delay_s=decision.delay_s, reason=decision.reason)
            await self.clock.sleep(decision.delay_s)

    # -- one tool round ------------------------------------------------------------------------
    async def _run_tools(self, calls: list[ToolCallPart]) -> AsyncIterator[ev.Event | Outcome]:
        """Run a round's calls in order; a pause ends the round with a `paused` `Outcome`."""
        ctx = self.ctx.for_call(turn=self.totals.steps(self.agent), runner=self)
        done, running = 0, False
        try:
            for call in calls:
                verdict = await self.hooks.before_tool(self.view, call)
                if isinstance(verdict, Ask):  # shown first, then a person answers (Ctrl-C cancels)
                    yield verdict.event
                    verdict = verdict.answer()
                if isinstance(verdict, Pause):
                    # The pending calls stay without results; the hook recorded them as pending.
                    yield verdict.event
                    done = len(calls)
                    yield Outcome.of("paused", verdict.message, self.session.last_text())
                    return
                running = True
                yield ev.ToolStart(call_id=call.id, name=call.name, arguments=call.arguments)
                result = ToolResult(verdict.content, is_error=True) if isinstance(verdict, Deny) else None
                if result is None:
                    async for item in stream_tool(self.tools, call.name, call.arguments, ctx,
                                                  stall_s=self.watchdog.stall_s, stalled=self.watchdog.tool_stalled):
                        if isinstance(item, ToolResult):
                            result = item
                        else:
                            yield item
                assert result is not None
                result = self.hooks.transform_result(self.view, call, result)
                status = "error" if result.is_error else "ok"
                self.session.append(Message.tool_result(ToolResultPart(
                    call_id=call.id, name=call.name, content=result.content, is_error=result.is_error, status=status,
                    images=list(result.images),
                )))
                done, running = done + 1, False
                self.totals.count_call(call.name)
                yield ev.ToolEnd(call_id=call.id, name=call.name, is_error=result.is_error, status=status,
                                 preview=result.preview, chars=len(result.content))
                for event in self.hooks.after_tool(self.view, call, result):
                    yield event
        except (asyncio.CancelledError, GeneratorExit):
            # Keep pairing whole before the cancel propagates: the call under way may have run, the
            # ones after it surely did not, and their results say which.
            closed = [interrupted_result(c, "cancelled before it finished") for c in calls[done:done + int(running)]]
            self.session.append_many(closed + [not_run_result(c, "not run: the run was cancelled before this call "
                                                               "started") for c in calls[done + int(running):]])
            raise


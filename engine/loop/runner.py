"""The turn loop: talk to the model until it says it is done (docs/architecture.md section 3).

One step: assemble the request from the session's history → stream the reply (yielding deltas) with
the harness's retries → append the assistant message (stamped with its model) → if it asked for tools,
run them through the protection chain, appending each result in declared order (a stretch of read-only
calls runs concurrently: `toolround.py`) → ask again. A unit
ends in `unit_end`, which carries its outcome: the stream ends in its result.

Cancellation (Ctrl-C) may land at any await: a reply still streaming is simply not recorded; a tool
round cut short gets `interrupted` results for the calls that did not finish, so the session keeps
pairing (docs/architecture.md invariant 1) and resumes cleanly.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Sequence
from typing import Any

from arreio.engine.core import events as ev
from arreio.engine.core.messages import Message, ToolCallPart, ToolResultPart, not_run_result
from arreio.engine.core.model_io import Done, ModelRequest, ProviderError, SystemBlock, Usage
from arreio.engine.core.ports import Provider
from arreio.engine.core.wording import counted
from arreio.engine.loop.answer import AnswerCheck, Judgement, answer_text
from arreio.engine.loop.ending import UnitEnding
from arreio.engine.loop.fallback import Fallback
from arreio.engine.loop.hooks import Hooks, Land, RunHook, Stop
from arreio.engine.loop.model_call import CallState, ModelCall
from arreio.engine.loop.outcome import Outcome
from arreio.engine.loop.reply import Reply
from arreio.engine.loop.toolround import Counted, ToolRound
from arreio.engine.loop.totals import Spent, Totals
from arreio.engine.loop.turn import TurnView
from arreio.engine.loop.watchdog import Watchdog
from arreio.engine.session.file import Session
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext

NOT_RUN_LATE = (
    "not run: {name} was waiting for approval when a new instruction came; call it again if it is still needed"
)


class Runner:
    """Runs units of work against one session. `totals` are the run's counters (a sub-agent's
    runner shares its parent's); `agent` names the runner ("" for the run's own)."""

    def __init__(
        self,
        *,
        provider: Provider,
        model: str,
        session: Session,
        tools: ToolRegistry,
        ctx: RunContext,
        system: list[SystemBlock],
        hooks: Sequence[RunHook] | Hooks = (),
        rng: random.Random | None = None,
        totals: Totals | None = None,
        agent: str = "",
        fallback: Fallback | None = None,
    ) -> None:
        self.provider, self.model, self.session, self.tools = provider, model, session, tools
        # The runner's own provider, model and tools: a unit without its own is served by these (a
        # unit's own are its alone; the next unit does not inherit them).
        self._own = (provider, model, tools)
        self.ctx, self.system, self.agent = ctx, system, agent
        self.settings, self.clock = ctx.settings, ctx.clock
        self.hooks = hooks if isinstance(hooks, Hooks) else Hooks(hooks)
        # Seeded by the system unless a test passes one: processes retrying in lockstep (every one
        # waiting 0.922, 1.758, 2.841 s) hit a recovering server together.
        self.rng = rng or random.Random()
        self.totals = totals or Totals()
        self.fallback = fallback or Fallback.for_run(ctx)  # shared with sub-agents: a switch holds for the run
        self.watchdog = Watchdog.from_settings(ctx.settings)  # the outer bound: no signal for N s cuts a call off
        self.unit_steps = 0
        self.unit_limit = ctx.settings.max_steps
        self.last_request: ModelRequest | None = None  # the request as last sent, after every hook
        self.last_error: ProviderError | None = None  # why the last model call failed
        self._turn_usage = Usage()  # the last model call's usage, its retries included
        self.last_done: Done | None = None  # how the last model reply ended (stop reason, error)
        self.answer: AnswerCheck | None = None  # the running unit's output schema check, if it has one
        self.ending = UnitEnding()  # the running unit's judge of replies without calls
        self.view = TurnView(self)

    def spawn(self, *, provider: Provider, model: str, session: Session, tools: ToolRegistry, agent: str) -> Runner:
        """A sub-agent's runner: same hooks, clock, settings and counters; its own session and tools."""
        ctx = self.ctx.for_session(session.id, session.path)
        return Runner(
            provider=provider,
            model=model,
            session=session,
            tools=tools,
            ctx=ctx,
            system=session.header.system,
            hooks=self.hooks,
            rng=self.rng,
            totals=self.totals,
            agent=agent,
            fallback=self.fallback,
        )

    # -- the loop -----------------------------------------------------------------------------
    async def run(
        self,
        user_text: str | None,
        *,
        unit_id: str = "main",
        max_steps: int | None = None,
        provider: Provider | None = None,
        model: str | None = None,
        tools: ToolRegistry | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> AsyncIterator[ev.Event]:
        """Run one unit; the last event is its `unit_end`. `user_text=None` continues the history as
        it stands (resume). `provider`, `model`, `tools`: this unit's own (a plan unit's).
        `output_schema`: the unit's answer must be JSON valid against it (engine/loop/answer.py)."""
        own_provider, own_model, own_tools = self._own
        if model is None:  # the runner's own model (with its own provider, whatever this unit names)
            model, provider = own_model, own_provider
        self.tools = own_tools if tools is None else tools
        self.model, self.provider = self.fallback.route(
            model, provider or own_provider
        )  # a retired model stays retired
        self.unit_limit, self.unit_steps = max_steps or self.settings.max_steps, 0
        self.ending = UnitEnding()
        self.answer = (
            AnswerCheck(output_schema, self.model, self.settings.structured_output)
            if output_schema is not None
            else None
        )
        if self.answer is not None and (answer_tool := self.answer.tool()) is not None:  # the tool route
            self.tools = ToolRegistry([*(t for n in self.tools.names() if (t := self.tools.get(n))), answer_tool])
        for event in self.hooks.at_unit_start(self.view):
            yield event
        if user_text is not None:
            # A call left waiting (for an approval) when a new instruction comes never ran: it is
            # answered as such, not healed later into "interrupted" (which says it may have run).
            self.session.append_many(
                [
                    *(
                        Message.tool_result(
                            ToolResultPart(
                                call_id=c.id,
                                name=c.name,
                                is_error=True,
                                status="error",
                                content=NOT_RUN_LATE.format(name=c.name),
                            )
                        )
                        for c in self.session.pending_calls()
                    ),
                    Message.user(user_text),
                ]
            )
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
            # One pass through the event loop a turn, whatever the turn awaited: a scripted or
            # offline turn, whose awaits all finish at once, never gave the loop a turn, so a Ctrl-C
            # or a cancel waited for the whole run and the cancelled stall timers of every model
            # call piled up unpurged in the loop (~7 a turn, the heap the collector walks).
            await asyncio.sleep(0)
            if self.unit_steps >= self.unit_limit and landing is None:
                message = f"stopped after {counted(self.unit_steps, 'model turn')} (max_steps {self.unit_limit})"
                if not self.session.header.parent:  # a sub-agent's parent decides
                    message += (
                        f"; the session is saved — continue with `arreio run --resume {self.session.id} --max-steps N`"
                    )
                yield ev.Ceiling(kind="steps", limit=self.unit_limit, value=self.unit_steps, message=message)
                outcome = Outcome.of("partial", message, self.session.last_text())
                break
            asked = await self.hooks.before_model(self.view, self._request(with_tools=landing is None))
            request, decision = asked.request, asked.decision
            for event in self.totals.told(asked.events):  # a compaction's summariser call is counted
                yield event
            if isinstance(decision, Stop):
                for event in decision.events:
                    yield event
                outcome = Outcome(decision.verdict, decision.exit_code, decision.message, self.session.last_text())
                break
            if isinstance(decision, Land) and landing is None:
                landing = decision
                yield ev.Ceiling(
                    kind=decision.kind, limit=decision.limit, value=decision.value, message=decision.message
                )
                self.session.append(Message.user(decision.instruction))
                request = self._request(with_tools=False)
            self.unit_steps += 1
            self.totals.count_turn(self.agent)
            reply: Reply | Outcome | None = None
            self.last_request, self._turn_usage = request, Usage()
            async for event in ModelCall(self, request).run():
                if isinstance(event, CallState):
                    self._record(event)
                elif isinstance(event, (Reply, Outcome)):
                    reply = event
                elif isinstance(event, Spent):  # a compaction made room on an overflow
                    self.totals.add_usage(event.usage, event.model)
                else:
                    yield event
            for event in self.hooks.after_model(self.view, self._turn_usage):
                yield event
            if isinstance(reply, Outcome):  # the model call failed for good
                outcome = Outcome(reply.verdict, reply.exit_code, reply.message, self.session.last_text())
                break
            assert reply is not None
            if landing is None and not reply.calls:  # a call the model wrote as text is run as one
                reply.calls, said = self.ending.text_calls(reply, self.tools, self.session.messages)
                reply.parts = [*reply.parts, *reply.calls]
                for event in said:
                    yield event
            self.session.append(Message.assistant(reply.parts, model=self.model))
            if landing is not None:
                # The reserve turn is over whatever the model did: calls it still made are not run.
                if reply.calls:
                    self.session.append_many(
                        [not_run_result(c, "not run: the run reached a ceiling") for c in reply.calls]
                    )
                outcome = Outcome.of("partial", landing.message, reply.text or self.session.last_text())
            elif not reply.calls:
                ending = self.ending.judge(reply, self.tools)
                for event in ending.events:
                    yield event
                if ending.note is not None:  # not an answer: the model is told so and asked again
                    self.session.append(Message.user(ending.note))
                else:
                    outcome = ending.outcome or self._final(ending.text or "")
            else:
                async for event in self._run_tools(reply.calls):
                    if isinstance(event, Outcome):
                        outcome = event
                    else:
                        yield event
                if outcome is None and self.answer is not None and self.answer.settled is not None:
                    outcome = self._settle(self.answer.settled, "")  # the `answer` tool was called
                if outcome is None:
                    for event in self.totals.told(await self.hooks.after_tool_round(self.view)):
                        yield event
        yield outcome.unit_end(unit_id, self.unit_steps)

    def _final(self, text: str) -> Outcome | None:
        """A reply without calls ends the unit — judged against the output schema when there is one
        (None: the answer was invalid and the model gets its repair turn)."""
        if self.answer is None:
            return Outcome.of("success", "", text)
        return self._settle(self.answer.judge_text(text), text)

    def _settle(self, judged: Judgement, text: str) -> Outcome | None:
        if judged.kind == "repair":
            self.session.append(Message.user(judged.message))
            return None
        if judged.kind == "fail":
            return Outcome.of("failed", judged.message, text)
        return Outcome.of("success", "", answer_text(judged.value), final_json=judged.value)

    def _request(self, *, with_tools: bool = True) -> ModelRequest:
        # Built from values that are already what the fields hold (the session's messages, the
        # registry's specs), so nothing is validated again: validating walked the whole history each
        # turn.
        return ModelRequest.model_construct(
            model=self.model,
            system=self.system,
            messages=list(self.session.messages),
            tools=self.tools.specs() if with_tools else [],
            max_tokens=self.settings.max_tokens,
            session_id=self.session.id,
            thinking=self.settings.thinking_request,
            output_schema=self.answer.request_schema if self.answer is not None and with_tools else None,
        )

    # -- one model call, with the harness's retries and the run's fallback models --------------
    def _record(self, state: CallState) -> None:
        """Where the model call stands (engine/loop/model_call.py streams the reply, retries what
        can be retried and switches to a fallback model when the model fails for good): what hooks
        read of it, and the model that serves the rest of the run."""
        self.last_request, self._turn_usage = state.request, state.usage
        self.model, self.provider = state.model, state.provider
        if state.done is not None:
            self.last_done, self.last_error = state.done, state.done.error
        self.totals.record_call(state.spent, state.model, retried=state.retried, switched=state.switched)

    # -- one tool round ------------------------------------------------------------------------
    async def _run_tools(self, calls: list[ToolCallPart]) -> AsyncIterator[ev.Event | Outcome]:
        """Run a round's calls (read-only stretches concurrently, everything recorded in declared
        order: engine/loop/toolround.py), counting each as the round says; a pause ends the round
        with a `paused` `Outcome`."""
        tool_round = ToolRound(self, calls)
        try:
            async for item in tool_round.run():
                if isinstance(item, Counted):
                    self.totals.count_call(item.name)
                else:
                    yield item
        finally:  # a cancel: the calls it stopped under way ran, in part, and count
            for name in tool_round.cut_short:
                self.totals.count_call(name)

"""The turn loop: talk to the model until it says it is done (DESIGN.md section 3).

One step: assemble the request from the session's history → stream the reply (yielding deltas) with
the harness's retries → append the assistant message (stamped with its model) → if it asked for tools,
run them in declared order through the protection chain, appending each result → ask again.

Cancellation (Ctrl-C) may land at any await: a reply still streaming is simply not recorded; a tool
round cut short gets `interrupted` results for the calls that did not finish, so the session keeps
pairing (DESIGN.md invariant 1) and resumes cleanly.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from arreio.engine import events as ev
from arreio.engine.config import Settings
from arreio.engine.governance.watchdog import Watchdog
from arreio.engine.hooks import Deny, Land, Pause, RunHook, Stop
from arreio.engine.messages import (
    Message,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    interrupted_result,
)
from arreio.engine.ports import Clock, Provider
from arreio.engine.providers.base import (
    Done,
    ModelRequest,
    SystemBlock,
    TextChunk,
    ThinkingChunk,
    ToolCallDone,
    Usage,
)
from arreio.engine.providers.retry import decide_retry
from arreio.engine.session.file import Session
from arreio.engine.tools.base import ToolContext, ToolResult
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.registry import ToolRegistry

PREVIEW_CHARS = 160


@dataclass
class Outcome:
    """How a unit ended. `exit_code` follows DESIGN.md section 9."""

    verdict: ev.Verdict = "success"
    exit_code: int = 0
    message: str = ""
    final_text: str = ""


@dataclass
class _Reply:
    parts: list = field(default_factory=list)
    calls: list[ToolCallPart] = field(default_factory=list)
    text: str = ""
    failure: str = ""
    exit_code: int = 0
    usage: Usage = field(default_factory=Usage)


class Runner:
    """Runs units of work against one session. Counters span units (a plan's units share them)."""

    def __init__(
        self,
        *,
        provider: Provider,
        model: str,
        session: Session,
        tools: ToolRegistry,
        tool_ctx: ToolContext,
        system: list[SystemBlock],
        settings: Settings,
        clock: Clock,
        rng: random.Random | None = None,
        hooks: list[RunHook] | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.session = session
        self.tools = tools
        self.tool_ctx = tool_ctx
        self.system = system
        self.settings = settings
        self.clock = clock
        self.rng = rng or random.Random(0)
        self.hooks = list(hooks or [])
        self.steps = 0
        self.tool_calls = 0
        self.tools_used: dict[str, int] = {}
        self.usage = Usage()
        self.retries = 0
        self.outcome = Outcome()
        self.unit_limit = settings.max_steps  # the running unit's step limit (hooks read it)
        self.last_request: ModelRequest | None = None  # the request as last sent, after every hook
        self.tool_ctx.parent = self
        self.watchdog = Watchdog.from_settings(settings)  # the outer bound: no signal for N s cuts a call off

    # -- the loop -----------------------------------------------------------------------------
    async def run(self, user_text: str | None, *, unit_id: str = "main", max_steps: int | None = None) -> AsyncIterator[ev.Event]:
        """Run one unit. `user_text=None` continues the history as it stands (resume).
        The unit's `Outcome` is in `self.outcome` when the generator ends."""
        self.outcome = Outcome()
        limit = max_steps or self.settings.max_steps
        self.unit_limit = limit  # a plan unit may set its own
        unit_steps = 0
        for hook in self.hooks:
            for event in hook.at_unit_start(self):
                yield event
        if user_text is not None:
            # A call left waiting (for an approval) when a new instruction comes never ran: it is
            # answered as such, not healed later into "interrupted" (which says it may have run).
            self.session.append_many([
                Message.tool_result(ToolResultPart(
                    call_id=call.id, name=call.name, is_error=True, status="error",
                    content=f"not run: {call.name} was waiting for approval when a new instruction came; "
                            "call it again if it is still needed",
                ))
                for call in self._pending_calls()
            ] + [Message.user(user_text)])
        landing: Land | None = None
        pending = self._pending_calls() if user_text is None else []
        if pending:  # a round left waiting (an approval): finish it before asking the model again
            async for event in self._run_tools(pending):
                yield event
        while self.outcome.verdict != "paused":
            if unit_steps >= limit and landing is None:
                message = f"stopped after {unit_steps} model turns (max_steps {limit})"
                if not getattr(self.session.header, "parent", None):  # a sub-agent's parent decides
                    resume = f"arreio run --resume {self.session.id} --max-steps N"
                    message += f"; the session is saved — continue with `{resume}`"
                yield ev.Ceiling(kind="steps", limit=limit, value=unit_steps, message=message)
                self.outcome = Outcome("partial", 4, message, self._last_text())
                break
            request = self._request(with_tools=landing is None)
            decision = await self._before_model(request)
            if isinstance(decision, Stop):
                for event in decision.events:
                    yield event
                self.outcome = Outcome(decision.verdict, decision.exit_code, decision.message, self._last_text())  # type: ignore[arg-type]
                break
            if isinstance(decision, Land) and landing is None:
                landing = decision
                yield ev.Ceiling(kind=decision.kind, limit=decision.limit, value=decision.value, message=decision.message)
                self.session.append(Message.user(decision.instruction))
                request = self._request(with_tools=False)
            unit_steps += 1
            self.steps += 1
            reply = _Reply()
            async for event in self._ask(reply, request):
                yield event
            for hook in self.hooks:
                for event in hook.after_model(self, reply.usage):
                    yield event
            if reply.failure:
                self.outcome = Outcome("failed", reply.exit_code, reply.failure, self._last_text())
                break
            self.session.append(Message.assistant(reply.parts, model=self.model))
            if landing is not None:
                # The reserve turn is over whatever the model did: calls it still made are not run.
                if reply.calls:
                    self.session.append_many([interrupted_result(c, "not run: the run reached a ceiling") for c in reply.calls])
                self.outcome = Outcome("partial", 4, landing.message, reply.text or self._last_text())
                break
            if not reply.calls:
                self.outcome = Outcome("success", 0, "", reply.text)
                break
            async for event in self._run_tools(reply.calls):
                yield event
            if self.outcome.verdict == "paused":
                break
            for hook in self.hooks:
                for event in await hook.after_tool_round(self):
                    yield event
        yield ev.UnitEnd(
            unit_id=unit_id, verdict=self.outcome.verdict, final_text=self.outcome.final_text, steps=unit_steps
        )

    def _pending_calls(self) -> list[ToolCallPart]:
        """Calls of the last assistant message that have no result yet, in declared order."""
        answered: set[str] = set()
        for message in reversed(self.session.messages):
            if message.role == "tool" and message.tool_result_part is not None:
                answered.add(message.tool_result_part.call_id)
            elif message.role == "assistant":
                return [c for c in message.tool_calls if c.id not in answered]
            else:
                return []
        return []

    def last_text(self) -> str:
        """The newest assistant text in the session (what a unit that ends now would answer)."""
        return self._last_text()

    def _last_text(self) -> str:
        for message in reversed(self.session.messages):
            if message.role == "assistant" and message.text:
                return message.text
        return ""

    # -- one model call, with the harness's retries ---------------------------------------------
    async def _on_overflow(self) -> list[ev.Event] | None:
        for hook in self.hooks:
            events = await hook.on_context_overflow(self)
            if events is not None:
                return events
        return None

    async def _before_model(self, request: ModelRequest) -> Stop | Land | None:
        for hook in self.hooks:
            decision = await hook.before_model(self, request)
            if decision is not None:
                return decision
        return None

    def _request(self, *, with_tools: bool = True) -> ModelRequest:
        return ModelRequest(
            model=self.model,
            system=self.system,
            messages=list(self.session.messages),
            tools=self.tools.specs() if with_tools else [],
            max_tokens=self.settings.max_tokens,
            session_id=self.session.id,
            thinking=self.settings.thinking_request,
        )

    async def _ask(self, reply: _Reply, request: ModelRequest) -> AsyncIterator[ev.Event]:
        self.last_request = request
        shown = ""  # text already shown to the user this step: a retried stream does not repeat it
        overflowed = False
        attempt = 0
        while True:
            attempt += 1
            text, thinking = "", ""
            blocks: list[ThinkingPart] = []  # a chunk carrying a signature closes its block
            calls: list[ToolCallPart] = []
            done: Done | None = None
            async for chunk in self.watchdog.stream(self.provider.stream(request)):
                if isinstance(chunk, TextChunk):
                    text += chunk.text
                    if len(text) > len(shown):
                        fresh = text[len(shown):] if text.startswith(shown) else chunk.text
                        shown = text if text.startswith(shown) else shown + chunk.text
                        yield ev.TextDelta(text=fresh)
                elif isinstance(chunk, ThinkingChunk) and chunk.redacted:
                    blocks.append(ThinkingPart(thinking="", redacted=chunk.redacted))
                elif isinstance(chunk, ThinkingChunk):
                    thinking += chunk.text
                    if chunk.signature:
                        blocks.append(ThinkingPart(thinking=thinking, signature=chunk.signature))
                        thinking = ""
                    if chunk.text:
                        yield ev.ThinkingDelta(text=chunk.text)
                elif isinstance(chunk, ToolCallDone):
                    calls.append(ToolCallPart(id=chunk.id, name=chunk.name, arguments=chunk.arguments))
                elif isinstance(chunk, Done):
                    done = chunk
            if done is None:
                done = Done(stop_reason="error")
            self.usage = self.usage + done.usage
            reply.usage = reply.usage + done.usage
            if done.error is None:
                break
            if done.error.kind == "context_overflow" and not overflowed:
                overflowed = True  # compact and retry once, then fail clearly
                shrunk = await self._on_overflow()
                if shrunk is not None:
                    for event in shrunk:
                        yield event
                    request.messages = list(self.session.messages)
                    continue
            decision = decide_retry(done.error, attempt, self.settings.retry, self.rng)
            if not decision.retry:
                reply.failure = decision.failure
                reply.exit_code = 5 if done.error.kind == "auth" else 1
                return
            self.retries += 1
            yield ev.Retry(attempt=attempt, delay_s=decision.delay_s, reason=decision.reason)
            await self.clock.sleep(decision.delay_s)
        if thinking:
            blocks.append(ThinkingPart(thinking=thinking))
        reply.parts.extend(blocks)
        if text:
            reply.parts.append(TextPart(text=text))
        reply.parts.extend(calls)
        reply.calls = calls
        reply.text = text

    # -- one tool round ------------------------------------------------------------------------
    async def _run_tools(self, calls: list[ToolCallPart]) -> AsyncIterator[ev.Event]:
        self.tool_ctx.turn = self.steps
        done = 0
        try:
            for call in calls:
                verdict = await self._before_tool(call)
                if isinstance(verdict, Pause):
                    # The pending calls stay without results; the hook recorded them as pending.
                    yield verdict.event
                    self.outcome = Outcome("paused", 3, verdict.message, self._last_text())
                    done = len(calls)
                    return
                yield ev.ToolStart(call_id=call.id, name=call.name, arguments=call.arguments)
                if isinstance(verdict, Deny):
                    result = ToolResult(verdict.content, is_error=True)
                else:
                    box: list[ToolResult] = []
                    async for event in self._execute(call, box):
                        yield event
                    result = box[0]
                for hook in self.hooks:
                    result = hook.transform_result(self, call, result)
                part = ToolResultPart(
                    call_id=call.id,
                    name=call.name,
                    content=result.content,
                    is_error=result.is_error,
                    status="error" if result.is_error else "ok",
                    images=list(result.images),
                )
                self.session.append(Message.tool_result(part))
                done += 1
                self.tool_calls += 1
                self.tools_used[call.name] = self.tools_used.get(call.name, 0) + 1
                yield ev.ToolEnd(
                    call_id=call.id,
                    name=call.name,
                    is_error=result.is_error,
                    status=part.status,
                    preview=_preview(result.content),
                    chars=len(result.content),
                )
                for hook in self.hooks:
                    for event in hook.after_tool(self, call, result):
                        yield event
        except (asyncio.CancelledError, GeneratorExit):
            # Keep pairing whole before the cancel propagates: the unfinished calls get results.
            self.session.append_many([interrupted_result(c, "cancelled before it finished") for c in calls[done:]])
            raise

    async def _execute(self, call: ToolCallPart, box: list[ToolResult]) -> AsyncIterator[ev.Event]:
        """Run one call, yielding the events the tool emits while it runs (a sub-agent's stream)."""
        queue: asyncio.Queue = asyncio.Queue()
        self.tool_ctx.emit = queue.put_nowait
        task = asyncio.ensure_future(run_tool(self.tools, call.name, call.arguments, self.tool_ctx))
        try:
            while not task.done():
                getter = asyncio.ensure_future(queue.get())
                finished, _ = await asyncio.wait(
                    {task, getter}, timeout=self.watchdog.stall_s, return_when=asyncio.FIRST_COMPLETED
                )
                if not finished:  # silent for too long: cut it off (the finally cancels the task)
                    getter.cancel()
                    box.append(self.watchdog.tool_stalled(call.name))
                    return
                if getter.done():
                    yield getter.result()
                else:
                    getter.cancel()
            while not queue.empty():
                yield queue.get_nowait()
            box.append(task.result())
        finally:
            self.tool_ctx.emit = None
            if not task.done():
                task.cancel()

    async def _before_tool(self, call: ToolCallPart) -> Deny | Pause | None:
        for hook in self.hooks:
            verdict = await hook.before_tool(self, call)
            if verdict is not None:
                return verdict
        return None


def _preview(content: str) -> str:
    line = content.strip().splitlines()[0] if content.strip() else ""
    return line[:PREVIEW_CHARS] + ("…" if len(line) > PREVIEW_CHARS else "")

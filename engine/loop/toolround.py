"""One tool round: the calls of one reply, through the hooks and the protection chain (docs/architecture.md 3, 6).

Each call is *admitted* (the hooks' `before_tool`: approvals, ceilings, repeat guards), *run*
(`stream_tool`), and *recorded* (`transform_result`, its result appended to the session, counted,
`tool_end`, `after_tool`) — always in declared order.

Parallel reads: a stretch of consecutive calls to tools that declare `read_only` (and are not
`sensitive`) runs concurrently, at most `tools.parallel` at a time. Every call of the stretch is still
admitted in order, each counted as it is admitted (not when its result is in), so a ceiling or a guard
decides exactly as in a serial round (invariant 7); a call that repeats one already in the stretch (same
tool, same arguments) ends it, because its guard must see the first one counted. Results enter the
history and `tool_start` / the tool's own events / `tool_end` are yielded in declared order, each call's
once it and every call before it have finished: the history and the event stream are what a serial round
gives, so pairing and replays are unchanged; only the wall time differs. A writing or sensitive call, an
unknown tool, or a call a hook wants to ask a person about ends the stretch.

Cancellation (Ctrl-C) may land at any await: every call of the round without a result gets one —
`interrupted` when it had started (it may have run), "not run" when it surely had not — so the
session keeps pairing (invariant 1) and resumes cleanly.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arreio.engine.core import events as ev
from arreio.engine.core.messages import Message, ToolCallPart, ToolResultPart, interrupted_result, not_run_result
from arreio.engine.loop.hooks import Ask, Deny, Pause
from arreio.engine.loop.outcome import Outcome
from arreio.engine.tools.base import ToolResult
from arreio.engine.tools.chain import stream_tool

if TYPE_CHECKING:
    from arreio.engine.loop.runner import Runner
    from arreio.engine.tools.run_context import RunContext


def may_overlap(tool: Any) -> bool:
    """Whether calls of this tool may run alongside other such calls: it declares itself read-only
    and is not sensitive (a sensitive call may wait for a person, which is never done out of order)."""
    return tool is not None and getattr(tool, "read_only", False) is True and not getattr(tool, "sensitive", False)


def _same(call: ToolCallPart) -> tuple[str, str]:
    return call.name, json.dumps(call.arguments, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Counted:
    """A call the run's counters take in now: the runner counts it before the round goes on, so the
    next call's ceilings see it (the round writes nothing of the runner's)."""

    name: str


class ToolRound:
    """Runs one reply's calls for `runner` (see the module docstring); `run` yields events, `Counted`
    calls and, when a call must wait for approval, a `paused` `Outcome` last. A cancel leaves in
    `cut_short` the calls it stopped under way and not counted yet (they ran, in part: they count)."""

    def __init__(self, runner: Runner, calls: list[ToolCallPart]) -> None:
        self.runner, self.calls = runner, calls
        self.ctx: RunContext = runner.ctx.for_call(turn=runner.totals.steps(runner.agent), runner=runner)
        self.limit = max(1, runner.settings.tools.parallel)
        self.gate = asyncio.Semaphore(self.limit)
        self.done = 0  # calls[:done] have their results in the session
        self.started: set[str] = set()  # call ids whose tool began to run
        self.verdicts: dict[
            str, Any
        ] = {}  # admitted ahead of their turn: call id → Deny | None, or an Ask/Pause to handle in order
        self.tasks: dict[str, asyncio.Task] = {}
        # A call counts when its result is in (as a serial round has always done: a sub-agent's calls
        # are counted before its `delegate` call), except in a stretch: counted when admitted there.
        self.counted: set[str] = set()
        self.cut_short: list[str] = []

    async def run(self) -> AsyncIterator[ev.Event | Outcome | Counted]:
        runner, hooks, view = self.runner, self.runner.hooks, self.runner.view
        try:
            for index, call in enumerate(self.calls):
                if call.id in self.verdicts:
                    verdict = self.verdicts.pop(call.id)
                else:
                    verdict = await hooks.before_tool(view, call)
                if isinstance(verdict, Ask):  # shown first, then a person answers (Ctrl-C cancels)
                    yield verdict.event
                    verdict = verdict.answer()
                if isinstance(verdict, Pause):
                    # The pending calls stay without results; the hook recorded them as pending.
                    yield verdict.event
                    self.done = len(self.calls)
                    yield Outcome.of("paused", verdict.message, runner.session.last_text())
                    return
                if not isinstance(verdict, Deny) and call.id not in self.tasks:
                    async for counted in self._look_ahead(index):
                        yield counted
                yield ev.ToolStart(call_id=call.id, name=call.name, arguments=call.arguments)
                result: ToolResult | None = (
                    ToolResult(verdict.content, is_error=True) if isinstance(verdict, Deny) else None
                )
                if result is None and call.id in self.tasks:
                    # shielded: a cancel reaches the handler below first, which closes every call at once
                    items, result = await asyncio.shield(self.tasks[call.id])
                    del self.tasks[call.id]
                    for item in items:
                        yield item
                elif result is None:
                    self.started.add(call.id)
                    async for item in self._stream(call):
                        if isinstance(item, ToolResult):
                            result = item
                        else:
                            yield item
                assert result is not None
                result = hooks.transform_result(view, call, result)
                if hooks.amends:
                    result = await hooks.amend_result(view, call, result)
                status = "error" if result.is_error else "ok"
                runner.session.append(
                    Message.tool_result(
                        ToolResultPart(
                            call_id=call.id,
                            name=call.name,
                            content=result.content,
                            is_error=result.is_error,
                            status=status,
                            images=list(result.images),
                        )
                    )
                )
                self.done += 1
                if call.id not in self.counted:
                    yield Counted(call.name)
                yield ev.ToolEnd(
                    call_id=call.id,
                    name=call.name,
                    is_error=result.is_error,
                    status=status,
                    preview=result.preview,
                    chars=len(result.content),
                )
                for event in hooks.after_tool(view, call, result):
                    yield event
        except (asyncio.CancelledError, GeneratorExit):
            # Keep pairing whole before the cancel propagates: a call under way may have run, the
            # ones that had not started surely did not, and their results say which.
            for task in self.tasks.values():
                task.cancel()
            rest = self.calls[self.done :]
            for call in rest:  # a call under way ran (in part): it counts (a cancelled turn said '0 tool calls')
                if call.id in self.started and (counted := self._count(call)) is not None:
                    self.cut_short.append(counted.name)
            runner.session.append_many(
                [
                    interrupted_result(c, "cancelled before it finished")
                    if c.id in self.started
                    else not_run_result(c, "not run: the run was cancelled before this call started")
                    for c in rest
                ]
            )
            raise

    def _count(self, call: ToolCallPart) -> Counted | None:
        """`call` as counted now (None: it was already)."""
        if call.id in self.counted:
            return None
        self.counted.add(call.id)
        return Counted(call.name)

    async def _look_ahead(self, index: int) -> AsyncIterator[Counted]:
        """When `calls[index]` (admitted to run) may overlap, admit the read-only calls after it and
        start the stretch's tools; a call that cannot join ends the stretch (it waits its turn). A
        call that goes ahead (to run or refused) is counted at once — yielded, and counted by the
        runner before the next call is admitted — so the next call's ceilings see it."""
        tools, call = self.runner.tools, self.calls[index]
        if self.limit < 2 or not may_overlap(tools.get(call.name)):
            return
        seen, ahead = {_same(call)}, []
        if (counted := self._count(call)) is not None:  # what the calls after it are admitted against
            yield counted
        for later in self.calls[index + 1 :]:
            if not may_overlap(tools.get(later.name)) or _same(later) in seen:
                break
            verdict = await self.runner.hooks.before_tool(self.runner.view, later)
            if not isinstance(verdict, (Ask, Pause)) and (counted := self._count(later)) is not None:
                yield counted
            self.verdicts[later.id] = verdict
            if isinstance(verdict, (Ask, Pause)):
                break
            seen.add(_same(later))
            if not isinstance(verdict, Deny):
                ahead.append(later)
        if ahead:
            for c in (call, *ahead):
                self.tasks[c.id] = asyncio.ensure_future(self._collect(c))

    async def _collect(self, call: ToolCallPart) -> tuple[list[Any], ToolResult]:
        """Run one call of a stretch (when a slot is free); its events are kept for its turn."""
        async with self.gate:
            self.started.add(call.id)
            items: list[Any] = []
            result: ToolResult | None = None
            async for item in self._stream(call):
                if isinstance(item, ToolResult):
                    result = item
                else:
                    items.append(item)
            assert result is not None
            return items, result

    def _stream(self, call: ToolCallPart) -> AsyncIterator[Any]:
        watchdog = self.runner.watchdog
        return stream_tool(
            self.runner.tools,
            call.name,
            call.arguments,
            self.ctx,
            stall_s=watchdog.stall_s,
            stalled=watchdog.tool_stalled,
        )

"""The runner's extension points: stop, land (reserve turn), deny, pause, reshape results, round events."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arreio.engine.core import events as ev
from arreio.engine.loop.hooks import Deny, Land, Pause, RunHook, Stop
from arreio.engine.providers.testing import ScriptedProvider
from arreio.engine.session.healing import check_pairing
from arreio.engine.tools.base import ToolResult
from tests.conftest import drain, make_runner, unit_end

LOOP = [{"text": f"turn {i}", "tool_calls": [{"name": "list_dir", "arguments": {}}]} for i in range(6)]


class LandAfterTwoCalls(RunHook):
    async def before_model(self, turn, request):
        if turn.totals.tool_calls >= 2:
            return Land(
                "tool_calls", 2, turn.totals.tool_calls, "stopped after 2 tool calls", "Finish now with what you have."
            )
        return None


def test_land_gives_a_reserve_turn_without_tools(tmp_path: Path) -> None:
    provider = ScriptedProvider(LOOP[:2] + [{"text": "Here is what I have."}])
    runner = make_runner(tmp_path, provider, hooks=[LandAfterTwoCalls()])
    events = asyncio.run(drain(runner))
    assert [e.kind for e in events if e.type == "ceiling"] == ["tool_calls"]
    assert provider.requests[-1].tools == []  # tools withdrawn for the reserve turn
    assert provider.requests[-1].messages[-1].text == "Finish now with what you have."
    assert unit_end(events).verdict == "partial" and unit_end(events).exit_code == 4
    assert unit_end(events).final_text == "Here is what I have."


def test_calls_made_in_the_reserve_turn_are_not_run(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, ScriptedProvider(LOOP), hooks=[LandAfterTwoCalls()])
    asyncio.run(drain(runner))
    assert runner.totals.tool_calls == 2 and check_pairing(runner.session.messages) == []
    assert runner.session.messages[-1].tool_result_part.status == "interrupted"


class StopAtOnce(RunHook):
    async def before_model(self, runner, request):
        return Stop("failed", 1, "budget spent", [ev.Ceiling(kind="budget", limit=1, value=2, message="budget spent")])


def test_stop_ends_the_unit_with_its_events(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, ScriptedProvider(LOOP), hooks=[StopAtOnce()])
    events = asyncio.run(drain(runner))
    assert [e.type for e in events] == ["ceiling", "unit_end"] and unit_end(events).message == "budget spent"


class DenyShell(RunHook):
    async def before_tool(self, runner, call):
        return Deny("denied by policy: shell") if call.name == "shell" else None


def test_deny_sends_the_model_an_error_result_without_running(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [{"tool_calls": [{"name": "shell", "arguments": {"command": "touch x"}}]}, {"text": "ok"}]
    )
    runner = make_runner(tmp_path, provider, hooks=[DenyShell()])
    asyncio.run(drain(runner))
    result = provider.requests[1].messages[-1].tool_result_part
    assert result.is_error and result.content == "denied by policy: shell"
    assert not (tmp_path / "work" / "x").exists()


class PauseSecond(RunHook):
    async def before_tool(self, runner, call):
        if call.id.endswith("_1"):
            return Pause(ev.ApprovalRequired(session_id=runner.session.id, call_id=call.id, name=call.name), "waiting")
        return None


def test_pause_stops_before_the_call_and_leaves_it_pending(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            {
                "tool_calls": [
                    {"name": "list_dir", "arguments": {}},
                    {"name": "list_dir", "arguments": {}},
                    {"name": "list_dir", "arguments": {}},
                ]
            },
            {"text": "never"},
        ]
    )
    runner = make_runner(tmp_path, provider, hooks=[PauseSecond()])
    events = asyncio.run(drain(runner))
    assert [e.type for e in events][-2:] == ["approval_required", "unit_end"]
    assert unit_end(events).verdict == "paused" and unit_end(events).exit_code == 3
    assert [m.role for m in runner.session.messages] == ["user", "assistant", "tool"]  # two calls pending
    assert len(provider.requests) == 1


class Shrink(RunHook):
    def transform_result(self, runner, call, result):
        return ToolResult(f"[{len(result.content)} chars stored]", result.is_error)

    async def after_tool_round(self, runner):
        return [ev.Compaction(tokens_before=100, tokens_after=10)]


def test_results_can_be_reshaped_and_rounds_can_yield_events(tmp_path: Path) -> None:
    provider = ScriptedProvider([LOOP[0], {"text": "ok"}])
    runner = make_runner(tmp_path, provider, hooks=[Shrink()])
    events = asyncio.run(drain(runner))
    assert "compaction" in [e.type for e in events]
    assert provider.requests[1].messages[-1].tool_result_part.content.endswith("chars stored]")


def test_resume_runs_the_calls_left_pending_then_asks_again(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            {
                "tool_calls": [
                    {"name": "list_dir", "arguments": {}},
                    {"name": "write_file", "arguments": {"path": "p.txt", "content": "x"}},
                ]
            },
            {"text": "finished"},
        ]
    )
    runner = make_runner(tmp_path, provider, hooks=[PauseSecond()])
    events = asyncio.run(drain(runner))
    assert unit_end(events).verdict == "paused" and not (tmp_path / "work" / "p.txt").exists()
    # the decision was made: the pending call may run now
    runner = make_runner(tmp_path, provider, session=runner.session)
    events = asyncio.run(drain(runner, None))
    assert [e.type for e in events][:2] == ["tool_start", "tool_end"]
    assert (tmp_path / "work" / "p.txt").read_text() == "x"
    assert unit_end(events).final_text == "finished" and check_pairing(runner.session.messages) == []


class ShrinkOnOverflow(RunHook):
    def __init__(self) -> None:
        self.calls = 0

    async def on_context_overflow(self, runner):
        self.calls += 1
        runner.session.rewrite(runner.session.messages[-1:])  # keep only the newest message
        return [ev.Compaction(tokens_before=200_000, tokens_after=1_000, messages_removed=1)]


def test_context_overflow_compacts_and_retries_once(tmp_path: Path) -> None:
    overflow = {"error": {"kind": "context_overflow", "status": 400, "message": "prompt is too long"}}
    provider = ScriptedProvider([overflow, {"text": "fits now"}])
    hook = ShrinkOnOverflow()
    runner = make_runner(tmp_path, provider, hooks=[hook])
    events = asyncio.run(drain(runner))
    assert hook.calls == 1 and "compaction" in [e.type for e in events]
    assert unit_end(events).final_text == "fits now"


def test_context_overflow_twice_fails_clearly(tmp_path: Path) -> None:
    overflow = {"error": {"kind": "context_overflow", "status": 400, "message": "prompt is too long"}}
    hook = ShrinkOnOverflow()
    runner = make_runner(tmp_path, ScriptedProvider([overflow, overflow, {"text": "never"}]), hooks=[hook])
    events = asyncio.run(drain(runner))
    assert hook.calls == 1 and unit_end(events).exit_code == 1
    assert "no longer fits the model's context window" in unit_end(events).message


def test_each_moment_asks_the_hooks_that_act_then_in_their_order(tmp_path: Path) -> None:
    """Hooks asks, at each moment, only the hooks whose class (or the object itself) defines that
    method; the order and "the first decision wins" stay as they were."""
    from arreio.engine.loop.hooks import Hooks

    asked: list[str] = []

    class Tags(RunHook):
        def __init__(self, tag: str) -> None:
            self.tag = tag

        def transform_result(self, turn, call, result):
            asked.append(self.tag)
            return ToolResult(result.content + f"+{self.tag}", result.is_error)

    class DenyAll(RunHook):
        async def before_tool(self, turn, call):
            asked.append("deny")
            return Deny("no")

    by_hand = RunHook()  # a method set on the object itself counts as well
    by_hand.after_tool = lambda turn, call, result: [ev.Warning_(message="seen", code="t")]  # type: ignore[method-assign]
    hooks = Hooks([Tags("a"), RunHook(), DenyAll(), Tags("b"), by_hand])
    assert [type(h).__name__ for h in hooks._asked["transform_result"]] == ["Tags", "Tags"]
    assert hooks._asked["before_tool"] == [hooks.hooks[2]] and hooks._asked["after_tool"] == [by_hand]
    assert hooks._asked["after_tool_round"] == []
    assert hooks.transform_result(None, None, ToolResult("x")).content == "x+a+b"  # type: ignore[arg-type]
    assert isinstance(asyncio.run(hooks.before_tool(None, None)), Deny)  # type: ignore[arg-type]
    assert [e.message for e in hooks.after_tool(None, None, None)] == ["seen"]  # type: ignore[arg-type]
    assert asked == ["a", "b", "deny"]

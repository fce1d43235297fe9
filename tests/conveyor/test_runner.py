"""The turn loop on the scripted provider: tool rounds, errors as data, retries, ceilings, cancel."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from arreio.engine.core.config import RetrySettings, Settings
from arreio.engine.providers.testing import FixedClock, ScriptedProvider, SlowProvider
from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing
from arreio.engine.tools.base import Tool, ToolResult
from arreio.engine.tools.run_context import RunContext
from tests.conftest import drain, make_runner, unit_end


def types(events) -> list[str]:
    return [e.type for e in events]


def reload(runner) -> list:
    runner.session.close()
    session, repairs = Session.open(runner.session.path, repair=False)
    return session.messages, repairs


def test_multi_turn_tool_loop(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            {"text": "Looking.", "tool_calls": [{"name": "list_dir", "arguments": {}}]},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "a.txt", "content": "hi\n"}},
                    {"name": "read_file", "arguments": {"path": "a.txt"}},
                ]
            },
            {"text": "All done."},
        ]
    )
    runner = make_runner(tmp_path, provider)
    events = asyncio.run(drain(runner))
    assert types(events) == [
        "text_delta",
        "tool_start",
        "tool_end",
        "tool_start",
        "tool_end",
        "tool_start",
        "tool_end",
        "text_delta",
        "unit_end",
    ]
    assert unit_end(events).verdict == "success" and unit_end(events).final_text == "All done."
    assert (tmp_path / "work" / "a.txt").read_text() == "hi\n"
    # the model saw each result, in declared order, before its next turn
    third = provider.requests[2].messages
    assert [m.role for m in third] == ["user", "assistant", "tool", "assistant", "tool", "tool"]
    assert "hi" in third[-1].tool_result_part.content
    assert all(m.model == "offline" for m in third if m.role == "assistant")
    messages, repairs = reload(runner)
    assert repairs == [] and check_pairing(messages) == []
    assert len(messages) == 7 and runner.totals.tool_calls == 3 and runner.totals.steps() == 3


def test_tool_error_goes_back_to_the_model_as_data(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            {
                "tool_calls": [
                    {"name": "read_file", "arguments": {"path": "missing.txt"}},
                    {"name": "no_such_tool", "arguments": {}},
                ]
            },
            {"text": "The file is missing."},
        ]
    )
    runner = make_runner(tmp_path, provider)
    events = asyncio.run(drain(runner))
    ends = [e for e in events if e.type == "tool_end"]
    assert [e.is_error for e in ends] == [True, True]
    seen = [m.tool_result_part for m in provider.requests[1].messages if m.role == "tool"]
    assert seen[0].is_error and "missing.txt" in seen[0].content
    assert "unknown tool" in seen[1].content
    assert unit_end(events).verdict == "success"


def test_retryable_fault_is_retried_with_retry_after(tmp_path: Path) -> None:
    clock = FixedClock()
    provider = ScriptedProvider(
        [
            {"error": {"status": 429, "message": "rate limited", "retry_after": 7}},
            {"error": {"status": 529, "message": "overloaded"}},
            {"text": "ok"},
        ]
    )
    runner = make_runner(tmp_path, provider, clock=clock)
    events = asyncio.run(drain(runner))
    retries = [e for e in events if e.type == "retry"]
    assert [r.attempt for r in retries] == [1, 2]
    assert retries[0].delay_s == 7 and "rate limited" in retries[0].reason
    assert 0 < retries[1].delay_s <= 2.0  # backoff attempt 2: base 1 s doubled, jittered
    assert clock.slept == [7, retries[1].delay_s]
    assert unit_end(events).verdict == "success" and runner.totals.retries == 2


def test_retry_after_beyond_the_bound_fails_with_a_clear_message(tmp_path: Path) -> None:
    provider = ScriptedProvider([{"error": {"status": 429, "message": "slow down", "retry_after": 900}}, {"text": "x"}])
    runner = make_runner(tmp_path, provider)
    events = asyncio.run(drain(runner))
    assert unit_end(events).verdict == "failed" and unit_end(events).exit_code == 1
    assert "900s" in unit_end(events).message and "retry_after_max_s" in unit_end(events).message


def test_auth_error_stops_at_once_with_exit_5(tmp_path: Path) -> None:
    provider = ScriptedProvider([{"error": {"status": 401, "message": "invalid x-api-key"}}, {"text": "x"}])
    runner = make_runner(tmp_path, provider)
    events = asyncio.run(drain(runner))
    assert "retry" not in types(events)
    assert unit_end(events).exit_code == 5 and "credentials" in unit_end(events).message


def test_retries_give_up_after_max_attempts(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [{"error": {"status": 500, "message": f"boom {i}"}} for i in range(5)] + [{"text": "x"}]
    )
    runner = make_runner(tmp_path, provider, settings=Settings(retry=RetrySettings(max_attempts=3)))
    events = asyncio.run(drain(runner))
    assert types(events).count("retry") == 2
    assert unit_end(events).verdict == "failed" and "after 3 attempts" in unit_end(events).message


def _shown_after_withdrawals(events: list) -> str:
    """What a reader of the stream keeps: the text deltas after the last retry that withdrew text."""
    shown = ""
    for event in events:
        if event.type == "text_delta":
            shown += event.text
        elif event.type in ("retry", "model_switch") and event.withdraws_text:
            shown = ""
    return shown


def test_a_cut_stream_is_withdrawn_and_the_retry_streams_whole(tmp_path: Path) -> None:
    text = "The answer is forty-two, as computed."
    provider = ScriptedProvider([{"text": text, "chunk_chars": 5, "cut_after_chars": 15}])
    runner = make_runner(tmp_path, provider)
    events = asyncio.run(drain(runner))
    retry = next(e for e in events if e.type == "retry")
    assert retry.withdraws_text
    assert _shown_after_withdrawals(events) == text
    messages, _ = reload(runner)
    assert messages[-1].text == text


class _Resampling:
    """A sampling model behind a dropped connection: the retry is another generation, not a replay."""

    name = "resampling"

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request):  # noqa: ANN001, ANN201 - the provider protocol
        from arreio.engine.core.model_io import Done, ProviderError, TextChunk

        self.calls += 1
        if self.calls == 1:
            yield TextChunk(text='{"name": "write')
            yield TextChunk(text='_file", "arguments')
            yield Done(stop_reason="error", error=ProviderError(kind="retryable", message="stream cut"))
            return
        yield TextChunk(text="I edited count.txt; ")
        yield TextChunk(text="it now says 3.")
        yield Done(stop_reason="end_turn")


def test_a_retried_sampling_model_never_splices_two_generations(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, _Resampling())
    events = asyncio.run(drain(runner))
    kept = reload(runner)[0][-1].text
    assert kept == "I edited count.txt; it now says 3."
    assert _shown_after_withdrawals(events) == kept  # what was shown adds up to what was kept
    assert unit_end(events).final_text == kept


def test_step_ceiling_lands_partial_with_pairing_intact(tmp_path: Path) -> None:
    loop = [{"tool_calls": [{"name": "list_dir", "arguments": {}}]} for _ in range(10)]
    runner = make_runner(tmp_path, ScriptedProvider(loop), settings=Settings(max_steps=3))
    events = asyncio.run(drain(runner))
    ceiling = [e for e in events if e.type == "ceiling"]
    assert len(ceiling) == 1 and ceiling[0].kind == "steps" and ceiling[0].value == 3
    assert unit_end(events).verdict == "partial" and unit_end(events).exit_code == 4
    messages, repairs = reload(runner)
    assert repairs == [] and check_pairing(messages) == []


def test_script_running_out_fails_clearly(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, ScriptedProvider([{"tool_calls": [{"name": "list_dir", "arguments": {}}]}]))
    events = asyncio.run(drain(runner))
    assert unit_end(events).verdict == "failed" and "ran out after 1 reply" in unit_end(events).message


class _NapArgs(BaseModel):
    seconds: float = 30


class Nap(Tool):
    name = "nap"
    description = "sleep"
    input_model = _NapArgs
    started = None

    async def execute(self, args: _NapArgs, ctx: RunContext) -> ToolResult:
        Nap.started.set()
        await asyncio.sleep(args.seconds)
        return ToolResult("rested")


def test_cancel_mid_tool_leaves_a_paired_session(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            {
                "tool_calls": [
                    {"name": "list_dir", "arguments": {}},
                    {"name": "nap", "arguments": {}},
                    {"name": "list_dir", "arguments": {"path": "."}},
                ]
            },
            {"text": "never reached"},
        ]
    )
    runner = make_runner(tmp_path, provider, extra_tools=[Nap()])

    async def scenario() -> None:
        Nap.started = asyncio.Event()
        task = asyncio.create_task(drain(runner))
        await Nap.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    messages, repairs = reload(runner)
    assert repairs == [] and check_pairing(messages) == []
    statuses = [m.tool_result_part.status for m in messages if m.role == "tool"]
    assert statuses == ["ok", "interrupted", "interrupted"]


def test_cancel_mid_stream_records_no_partial_reply(tmp_path: Path) -> None:
    provider = SlowProvider(
        ScriptedProvider(
            [
                {"tool_calls": [{"name": "list_dir", "arguments": {}}]},
                {"text": "a long answer streaming slowly " * 5, "chunk_chars": 4},
            ]
        ),
        delay_s=0.01,
    )
    runner = make_runner(tmp_path, provider)

    async def scenario() -> list:
        seen = []

        async def consume() -> None:
            async for event in runner.run("go"):
                seen.append(event)

        task = asyncio.create_task(consume())
        while sum(e.type == "text_delta" for e in seen) < 3:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return seen

    seen = asyncio.run(scenario())
    assert "unit_end" not in types(seen)
    messages, repairs = reload(runner)
    assert repairs == [] and check_pairing(messages) == []
    assert [m.role for m in messages] == ["user", "assistant", "tool"]  # the streaming reply was not recorded
    # and the session resumes: a fresh runner on the reopened session finishes the job
    session, _ = Session.open(runner.session.path)
    runner2 = make_runner(tmp_path / "again", ScriptedProvider([{"text": "x"}, {"text": "finished"}]), session=session)
    assert unit_end(asyncio.run(drain(runner2, None))).final_text == "finished"


def test_a_turn_whose_awaits_all_finish_at_once_still_gives_the_loop_a_turn(tmp_path: Path) -> None:
    """A scripted turn (instant model, inline file read) awaits nothing that suspends; the
    runner passes through the event loop once a turn, so other tasks (a Ctrl-C handler, a cancel)
    are not held off for the whole run, and the loop purges the stall timers cancelled each turn."""
    from arreio.engine.providers.scripted import ScriptedProvider

    turns = 40
    (tmp_path / "work").mkdir(parents=True, exist_ok=True)
    (tmp_path / "work" / "f.txt").write_text("x\n")
    replies = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "f.txt"}}]} for _ in range(turns)]
    runner = make_runner(tmp_path, ScriptedProvider([*replies, {"text": "done"}]))

    async def go() -> tuple[int, int, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        beat = asyncio.ensure_future(ticker())
        events = await drain(runner)
        beat.cancel()
        loop = asyncio.get_running_loop()
        return ticks, len([e for e in events if e.type == "tool_end"]), len(loop._scheduled)  # noqa: SLF001

    ticks, ends, scheduled = asyncio.run(go())
    assert ends == turns and ticks >= turns  # the other task ran at least once a turn
    assert scheduled < 120  # cancelled timers purged as the run went (it held one per model chunk)

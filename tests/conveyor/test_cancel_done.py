"""A cancelled run's stream still ends in its result (docs/architecture.md section 3): the calls the
cancel cut short get their `tool_end` (interrupted), the unit it cut short its `unit_end` (cancelled,
130: every `unit_start` has one), and the last event is `done` (cancelled, 130),
yielded to the caller — nothing has to be read back from the run's events file. The cancel itself
goes on after `done`: the caller's `async for` raises it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest

from arreio.engine.providers.testing import FixedClock, ScriptedProvider, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_pipeline
from tests.conftest import signalled_mid_answer


def _options(work: Path) -> RunOptions:
    work.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work.parent / "home")}
    return RunOptions(goal_text="# Wait a while\n", cwd=work, env=env, yes=True)


def test_a_cancel_mid_call_ends_the_stream_in_done(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [{"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 30"}}]}, {"text": "never reached"}]
    )
    deps = PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(provider))
    work = tmp_path / "work"
    seen: list = []

    async def scenario() -> None:
        async def consume() -> None:
            async for event in run_pipeline(_options(work), deps):
                seen.append(event)

        task = asyncio.create_task(consume())
        while not any(e.type == "tool_start" for e in seen):
            assert not task.done(), seen
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):  # the cancel goes on after `done`
            await task

    asyncio.run(scenario())
    done = seen[-1]
    assert done.type == "done" and done.verdict == "cancelled" and done.exit_code == 130
    closed = [e for e in seen if e.type == "tool_end"]
    assert [(e.name, e.status) for e in closed] == [("shell", "interrupted")]
    units = [(e.type, e.unit_id) for e in seen if e.type in ("unit_start", "unit_end")]
    assert units == [("unit_start", "main"), ("unit_end", "main")]
    end = next(e for e in seen if e.type == "unit_end")
    assert (end.verdict, end.exit_code, end.message) == ("cancelled", 130, "cancelled")
    assert seen.index(end) > seen.index(closed[0])  # the unit ends after its calls do
    # What the caller was given is what the run recorded, to the last line.
    recorded = (work / ".arreio" / "runs" / seen[0].run_id / "events.jsonl").read_text().splitlines()
    assert [json.loads(line)["type"] for line in recorded] == [e.type for e in seen]


@pytest.mark.slow
def test_arreio_run_json_ends_in_done_after_ctrl_c(tmp_path: Path, arreio_env) -> None:
    """`--json` after Ctrl-C: the last line on stdout is the run's `done`, as the stream gave it."""
    code, out, err = signalled_mid_answer(tmp_path, arreio_env, signal.SIGINT, "--json")
    assert code == 130, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["type"] == "run_start" and lines[-1]["type"] == "done"
    assert lines[-1]["verdict"] == "cancelled" and lines[-1]["exit_code"] == 130
    starts = [line["unit_id"] for line in lines if line["type"] == "unit_start" and line.get("agent") is None]
    ends = [line for line in lines if line["type"] == "unit_end" and line.get("agent") is None]
    assert starts and [line["unit_id"] for line in ends] == starts and ends[-1]["verdict"] == "cancelled"
    assert "arreio: cancelled; continue with `arreio run --resume" in err


def test_a_cancel_inside_a_sub_agent_closes_the_sub_agents_calls_and_units_too(tmp_path: Path) -> None:
    """A consumer pairs each `tool_start` with its `tool_end` (and units alike) by agent and id: a
    cancel while a sub-agent's call runs must close the sub-agent's, not only the run's own."""
    provider = ScriptedProvider(
        [{"tool_calls": [{"name": "delegate", "arguments": {"task": "Wait a while"}}]}, {"text": "never reached"}],
        agents={"d1": [{"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 30"}}]}, {"text": "no"}]},
    )
    deps = PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(provider))
    seen: list = []

    async def scenario() -> None:
        async def consume() -> None:
            async for event in run_pipeline(_options(tmp_path / "work"), deps):
                seen.append(event)

        task = asyncio.create_task(consume())
        while not any(e.type == "tool_start" and e.name == "shell" for e in seen):
            assert not task.done(), seen
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert seen[-1].type == "done" and seen[-1].verdict == "cancelled"
    for start, end, key in (("tool_start", "tool_end", "call_id"), ("unit_start", "unit_end", "unit_id")):
        opened = [(e.agent, getattr(e, key)) for e in seen if e.type == start]
        closed = [(e.agent, getattr(e, key)) for e in seen if e.type == end]
        assert sorted(opened, key=str) == sorted(closed, key=str), (start, opened, closed)
    # closed innermost first: the sub-agent's call, then the delegate call that holds it
    ends = [(e.agent, e.name) for e in seen if e.type == "tool_end" and e.status == "interrupted"]
    assert ends == [("d1", "shell"), (None, "delegate")]

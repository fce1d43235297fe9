"""Parallel read-only tool calls (engine/loop/toolround.py): a stretch of read-only calls in one
reply runs concurrently, while results enter the history and events are yielded in declared order;
a writing call, a sensitive one or a repeat ends the stretch; guards and ceilings count each call."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from pydantic import BaseModel

from arreio.engine.core.config import Settings
from arreio.engine.core.messages import ToolResultPart
from arreio.engine.governance.ceilings import CeilingsHook
from arreio.engine.providers.testing import ScriptedProvider
from arreio.engine.session.healing import check_pairing
from arreio.engine.tools.base import Tool, ToolResult
from arreio.engine.walls.settings import GovernanceSettings
from tests.conftest import drain, make_runner, unit_end


class _Key(BaseModel):
    key: str


class _Journal:
    """What the fake tools saw: ("start"|"end", key) with the loop's clock, in the order it happened."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str, float]] = []

    def note(self, what: str, key: str) -> None:
        self.entries.append((what, key, time.monotonic()))

    def order(self, what: str) -> list[str]:
        return [k for w, k, _ in self.entries if w == what]

    def at(self, what: str, key: str) -> float:
        return next(t for w, k, t in self.entries if w == what and k == key)


def _tools(journal: _Journal, delays: dict[str, float]) -> list[Tool]:
    class SlowRead(Tool):
        name = "slow_read"
        description = "A slow read."
        input_model = _Key
        read_only = True

        async def execute(self, args: _Key, ctx) -> ToolResult:
            journal.note("start", args.key)
            await asyncio.sleep(delays.get(args.key, 0.05))
            journal.note("end", args.key)
            return ToolResult(f"value of {args.key}")

    class SlowWrite(SlowRead):
        name = "slow_write"
        description = "A slow write."
        read_only = False

    class SensitiveRead(SlowRead):
        name = "sensitive_read"
        description = "A read that asks first."
        sensitive = True

    return [SlowRead(), SlowWrite(), SensitiveRead()]


def _reply(*calls: tuple[str, str]) -> list[dict]:
    return [{"tool_calls": [{"name": n, "arguments": {"key": k}} for n, k in calls]}, {"text": "done"}]


def _run(tmp_path: Path, replies: list[dict], delays: dict[str, float], *, parallel: int = 4, hooks=None):
    journal = _Journal()
    settings = Settings(tools={"parallel": parallel})
    runner = make_runner(
        tmp_path, ScriptedProvider(replies), extra_tools=_tools(journal, delays), settings=settings, hooks=hooks
    )
    t0 = time.monotonic()
    events = asyncio.run(drain(runner))
    return runner, events, journal, time.monotonic() - t0


def _results(runner) -> list[tuple[str, str]]:
    return [
        (p.call_id, p.content)
        for m in runner.session.messages
        if m.role == "tool"
        for p in m.parts
        if isinstance(p, ToolResultPart)
    ]


def test_reads_finishing_out_of_order_are_recorded_and_reported_in_declared_order(tmp_path: Path) -> None:
    # a finishes last, d first: completion order is the reverse of the declared order
    delays = {"a": 0.4, "b": 0.3, "c": 0.2, "d": 0.1}
    # how much sooner they end together is measured by tests/bench/bench_parallel_tools.py, not asserted
    runner, events, journal, _ = _run(tmp_path, _reply(*[("slow_read", k) for k in "abcd"]), delays)
    assert unit_end(events).verdict == "success"
    assert journal.order("end") == ["d", "c", "b", "a"]  # they really did finish out of order …
    assert set(journal.order("start")) == set("abcd") and all(
        journal.at("start", k) < journal.at("end", "d") for k in "abcd"
    )  # … because they overlapped
    ids = [e.call_id for e in events if e.type == "tool_start"]
    assert [(e.type, e.call_id) for e in events if e.type in ("tool_start", "tool_end")] == [
        (kind, cid) for cid in ids for kind in ("tool_start", "tool_end")
    ]  # start/end paired, in declared order
    assert [e.arguments["key"] for e in events if e.type == "tool_start"] == list("abcd")
    assert [c for _, c in _results(runner)] == [f"value of {k}" for k in "abcd"]
    assert [cid for cid, _ in _results(runner)] == ids
    assert check_pairing(runner.session.messages) == []
    assert runner.totals.tool_calls == 4


def test_with_parallel_1_the_same_reads_run_one_by_one(tmp_path: Path) -> None:
    delays = {"a": 0.1, "b": 0.05}
    _, events, journal, _ = _run(tmp_path, _reply(("slow_read", "a"), ("slow_read", "b")), delays, parallel=1)
    assert journal.order("end") == ["a", "b"] and journal.at("end", "a") <= journal.at("start", "b")
    assert [e.arguments["key"] for e in events if e.type == "tool_start"] == ["a", "b"]


def test_the_parallel_bound_holds(tmp_path: Path) -> None:
    keys = "abcdef"
    _, _, journal, _ = _run(tmp_path, _reply(*[("slow_read", k) for k in keys]), {k: 0.1 for k in keys}, parallel=2)
    moments = sorted(
        [(t, +1) for w, _, t in journal.entries if w == "start"]
        + [(t, -1) for w, _, t in journal.entries if w == "end"],
        key=lambda x: (x[0], x[1]),
    )
    running = peak = 0
    for _, step in moments:
        running += step
        peak = max(peak, running)
    assert peak == 2


def test_a_writing_call_in_the_middle_ends_the_stretch(tmp_path: Path) -> None:
    calls = [("slow_read", "a"), ("slow_read", "b"), ("slow_write", "w"), ("slow_read", "c"), ("slow_read", "d")]
    runner, events, journal, _ = _run(tmp_path, _reply(*calls), {"a": 0.1, "b": 0.1, "w": 0.1, "c": 0.1, "d": 0.1})
    assert journal.at("end", "a") <= journal.at("start", "w") and journal.at("end", "b") <= journal.at("start", "w")
    assert journal.at("end", "w") <= journal.at("start", "c") and journal.at("end", "w") <= journal.at("start", "d")
    assert journal.at("start", "b") < journal.at("end", "a")  # a and b overlapped; so did c and d
    assert journal.at("start", "d") < journal.at("end", "c")
    assert [e.arguments["key"] for e in events if e.type == "tool_start"] == ["a", "b", "w", "c", "d"]
    assert check_pairing(runner.session.messages) == []


def test_a_sensitive_read_is_not_run_alongside_others(tmp_path: Path) -> None:
    calls = [("slow_read", "a"), ("sensitive_read", "s"), ("slow_read", "b")]
    _, _, journal, _ = _run(tmp_path, _reply(*calls), {"a": 0.1, "s": 0.1, "b": 0.1})
    assert journal.at("end", "a") <= journal.at("start", "s") <= journal.at("end", "s") <= journal.at("start", "b")


def test_repeat_guard_and_call_ceiling_count_each_call_of_a_stretch(tmp_path: Path) -> None:
    """Six reads in one reply under max_tool_calls 4 and a repeat limit of 1 (`few`): the guard must
    see the first `a` counted before the second, and the ceiling each admitted call, as in a serial
    round — so `a` again is refused, and the fifth and sixth calls are not run."""
    hook = CeilingsHook(
        GovernanceSettings(max_tool_calls=4, repeat_limits={"few": 1}), partial_path="p", session_id="s"
    )
    calls = [
        ("slow_read", "a"),
        ("slow_read", "b"),
        ("slow_read", "a"),
        ("slow_read", "c"),
        ("slow_read", "d"),
        ("slow_read", "e"),
    ]
    runner, events, journal, _ = _run(tmp_path, _reply(*calls), {}, hooks=[hook])
    results = [c for _, c in _results(runner)]
    assert results[:2] == ["value of a", "value of b"]
    assert results[2].startswith("not run: slow_read already ran 1 time(s)")
    assert results[3] == "value of c"
    assert all("ceiling of 4 tool calls" in r for r in results[4:])
    assert sorted(journal.order("end")) == ["a", "b", "c"]
    assert unit_end(events).verdict == "partial"  # the ceiling landed the run
    assert check_pairing(runner.session.messages) == []


def test_a_cancel_mid_stretch_closes_every_call_and_keeps_pairing(tmp_path: Path) -> None:
    journal = _Journal()
    settings = Settings(tools={"parallel": 2})
    replies = _reply(*[("slow_read", k) for k in "abcd"])
    runner = make_runner(
        tmp_path, ScriptedProvider(replies), extra_tools=_tools(journal, {k: 5.0 for k in "abcd"}), settings=settings
    )

    async def go() -> None:
        task = asyncio.ensure_future(drain(runner))
        while len(journal.order("start")) < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    asyncio.run(go())
    assert check_pairing(runner.session.messages) == []
    results = [p for m in runner.session.messages if m.role == "tool" for p in m.parts]
    assert [p.status for p in results] == ["interrupted"] * 4
    assert ["may or may not" in p.content for p in results] == [True, True, False, False]  # c, d never started

"""A model's regex cannot hang the harness: `grep` and `result_grep` stop a catastrophic
pattern within their budget with a clear error, and the event loop keeps running meanwhile (before,
`(a+)+$`-style patterns held the interpreter past every timeout and ignored Ctrl-C)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arreio.engine.core.config import Settings
from arreio.engine.tools.builtin import builtin_tools
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.pattern import BoundedPattern
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext

EVIL = r"(a|aa)+$"
LINE = "a" * 64 + "!"


def test_a_catastrophic_pattern_stops_within_its_budget(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text(LINE + "\n")
    ctx = RunContext(cwd=tmp_path, settings=Settings(tools={"timeout_s": 3}))
    result = asyncio.run(run_tool(ToolRegistry(builtin_tools()), "grep", {"pattern": EVIL}, ctx))
    # It stops, with a clear error (the test's own timeout is the bound; how fast is tests/bench's to say).
    # On a busy machine the tool's timeout can come first: either way it is said, not hung.
    assert result.is_error and ("took longer than 1.5 s to match" in result.content or "timed out" in result.content)


def test_the_event_loop_keeps_running_while_a_pattern_matches(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text(LINE + "\n")
    ctx = RunContext(cwd=tmp_path, settings=Settings(tools={"timeout_s": 3}))

    async def scenario() -> int:
        ticks = 0
        grep = asyncio.ensure_future(run_tool(ToolRegistry(builtin_tools()), "grep", {"pattern": EVIL}, ctx))
        while not grep.done():
            await asyncio.sleep(0.01)
            ticks += 1
        return ticks

    # the loop (and so Ctrl-C handling) ran while the pattern matched: a match holding the GIL gives it
    # one tick at most, however fast the machine (a tick count scaled to the budget failed on a busy one)
    assert asyncio.run(scenario()) >= 3


def test_ordinary_patterns_behave_as_pythons_re() -> None:
    pattern = BoundedPattern(r"(?i)def \w+_id\b", tool="grep")
    assert pattern.search("    DEF user_id(x):") and not pattern.search("define user_identity")


def test_result_grep_is_bounded_too(tmp_path: Path) -> None:
    from arreio.engine.context.resultsets import ResultStore
    from arreio.engine.context.tools import resultset_tools

    store = ResultStore(tmp_path / "sessions" / "sid")
    handle, _, _ = store.store("t", {}, "col\n" + "\n".join([LINE] * 3))
    ctx = RunContext(cwd=tmp_path, state_dir=tmp_path, session_id="sid", settings=Settings(tools={"timeout_s": 3}))
    grep = next(t for t in resultset_tools() if t.name == "result_grep")
    result = asyncio.run(run_tool(ToolRegistry([grep]), "result_grep", {"handle": handle, "pattern": EVIL}, ctx))
    # its budget follows the configured tool timeout, as grep's does (half of it: 1.5 s here)
    assert result.is_error and ("took longer than 1.5 s to match" in result.content or "timed out" in result.content)

"""Each ceiling lands: a reserve turn without tools, a partial result on disk, verdict partial, exit 4."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel

from arreio.engine.core.config import Settings
from arreio.engine.governance.ceilings import CeilingsHook
from arreio.engine.loop.feature import Feature
from arreio.engine.providers.testing import ScriptedProvider, SlowProvider
from arreio.engine.tools.base import Tool, ToolResult
from arreio.engine.walls.settings import GovernanceSettings, governance_settings
from tests.conftest import drain, make_runner, unit_end
from tests.governance.helpers import kinds, run, write_config

LANDED = "Here is what I have so far."


def listing(n: int) -> list[dict]:
    return [
        {"text": f"turn {i}", "tool_calls": [{"name": "list_dir", "arguments": {"path": f"d{i}"}}]} for i in range(n)
    ]


def assert_landed(work: Path, events, report, kind: str, words: str) -> None:
    ceiling = kinds(events, "ceiling")
    assert [c.kind for c in ceiling] == [kind]
    done = events[-1]
    assert done.verdict == "partial" and done.exit_code == 4 and report["exit_code"] == 4
    assert words in done.message and "the partial report is in .arreio/runs/" in done.message
    assert report["ceiling"]["kind"] == kind and report["partial_path"] in done.message
    partial = (work / report["partial_path"]).read_text()
    assert LANDED in partial and done.message in partial


def test_tool_call_ceiling_lands_with_a_reserve_turn(tmp_path: Path) -> None:
    work = tmp_path / "w"
    (work / "d0").mkdir(parents=True)
    write_config(work, "governance:\n  max_tool_calls: 3\n")
    provider = ScriptedProvider([*listing(3), {"text": LANDED}])
    events, report = run(work, provider)
    assert_landed(work, events, report, "tool_calls", "stopped after 3 tool calls")
    assert provider.requests[-1].tools == [] and "Finish now" in provider.requests[-1].messages[-1].text
    assert report["tool_calls"] == 3 and report["final_text"] == LANDED


def test_calls_beyond_the_ceiling_in_one_round_are_not_run(tmp_path: Path) -> None:
    work = tmp_path / "w"
    write_config(work, "governance:\n  max_tool_calls: 2\n")
    calls = [{"name": "write_file", "arguments": {"path": f"f{i}.txt", "content": "x"}} for i in range(4)]
    events, report = run(work, [{"tool_calls": calls}, {"text": LANDED}])
    assert sorted(p.name for p in work.glob("f*.txt")) == ["f0.txt", "f1.txt"]
    refused = [e for e in kinds(events, "tool_end") if e.is_error]
    assert len(refused) == 2 and "ceiling of 2 tool calls" in refused[0].preview
    assert_landed(work, events, report, "tool_calls", "stopped after")


class Cached(BaseModel):
    key: str


class CachedLookup(Tool):
    """A tool with a cache in front of its work: repeats are answered without executing again."""

    name = "lookup"
    description = "Look a key up (cached)."
    input_model = Cached
    repeat: ClassVar[str] = "few"

    def __init__(self) -> None:
        self.executed = 0
        self.cache: dict[str, str] = {}

    async def execute(self, args: Cached, ctx) -> ToolResult:
        if args.key not in self.cache:
            self.executed += 1
            self.cache[args.key] = f"value of {args.key}"
        return ToolResult(self.cache[args.key])


class LookupFeature(Feature):
    name = "lookup"

    def __init__(self, tool: Tool) -> None:
        self.tool = tool

    def tools(self, ctx):
        return [self.tool]


def test_repetition_is_counted_through_a_cache(tmp_path: Path) -> None:
    work = tmp_path / "w"
    tool = CachedLookup()
    same = [{"text": f"again {i}", "tool_calls": [{"name": "lookup", "arguments": {"key": "k"}}]} for i in range(4)]
    events, report = run(work, [*same, {"text": LANDED}], features=[LookupFeature(tool)])
    assert tool.executed == 1  # the cache answered the repeats...
    ends = kinds(events, "tool_end")
    assert [e.is_error for e in ends] == [False, False, False, True]  # ...but they still counted: the 4th is refused
    assert "already ran 3 time(s)" in ends[-1].preview
    assert_landed(work, events, report, "repetition", "lookup called 4 times with the same arguments")
    assert report["ceiling"]["limit"] == 3 and report["ceiling"]["value"] == 4


def test_step_ceiling_uses_the_last_turn_as_the_reserve_turn(tmp_path: Path) -> None:
    work = tmp_path / "w"
    write_config(work, "max_steps: 3\n")
    for i in range(3):
        (work / f"d{i}").mkdir(parents=True, exist_ok=True)
    provider = ScriptedProvider([*listing(2), {"text": LANDED}])
    events, report = run(work, provider)
    assert len(provider.requests) == 3 and provider.requests[-1].tools == []
    assert_landed(work, events, report, "steps", "stopped after 3 model turns (max_steps 3)")
    assert "arreio run --resume" in events[-1].message


def test_token_budget_lands_before_the_next_turn_would_overflow(tmp_path: Path) -> None:
    work = tmp_path / "w"
    write_config(work, "governance:\n  max_total_tokens: 400\n")
    usage = {"input_tokens": 100, "output_tokens": 50}
    replies = [{**r, "usage": usage} for r in listing(5)]
    replies.insert(2, {"text": LANDED, "usage": usage})
    events, report = run(work, replies)
    # 150 after one turn (+150 more fits), 300 after two (+150 would pass 400): land on the third
    assert report["input_tokens"] + report["output_tokens"] == 450
    assert_landed(work, events, report, "tokens", "stopped after 300 tokens of a 400 budget")


def test_cost_budget_counts_the_estimated_spend(tmp_path: Path) -> None:
    settings = GovernanceSettings(max_cost_usd=0.01)
    usage = {"input_tokens": 1000, "output_tokens": 200}  # $0.006 a turn at claude-sonnet-4 prices
    provider = ScriptedProvider([{**r, "usage": usage} for r in [*listing(1), {"text": LANDED}, *listing(3)]])
    runner = make_runner(
        tmp_path,
        provider,
        model="anthropic/claude-sonnet-4",
        hooks=[CeilingsHook(settings, partial_path="p.md", session_id="s")],
    )
    events = asyncio.run(drain(runner))
    ceiling = kinds(events, "ceiling")
    assert [c.kind for c in ceiling] == ["cost"] and "of a $0.01 budget" in ceiling[0].message
    assert unit_end(events).exit_code == 4 and unit_end(events).final_text == LANDED and len(provider.requests) == 2


def test_unknown_price_warns_once_instead_of_guessing(tmp_path: Path) -> None:
    provider = ScriptedProvider([*listing(2), {"text": "done"}])
    runner = make_runner(
        tmp_path,
        provider,
        model="litellm/some-unpriced-model-xyz",
        hooks=[CeilingsHook(GovernanceSettings(max_cost_usd=1.0), partial_path="p.md", session_id="s")],
    )
    events = asyncio.run(drain(runner))
    assert len([e for e in events if e.type == "warning" and e.code == "cost_unknown"]) == 1
    assert unit_end(events).verdict == "success"


class NeverReturns(Tool):
    name = "hang"
    description = "Waits forever."
    input_model = Cached
    timeout_s = None  # no chain timeout: only the watchdog can stop it

    async def execute(self, args, ctx) -> ToolResult:
        await asyncio.Event().wait()
        return ToolResult("unreachable")


def test_stall_watchdog_cuts_a_tool_that_never_returns(tmp_path: Path) -> None:
    work = tmp_path / "w"
    write_config(work, "governance:\n  stall_s: 0.2\n")
    replies = [{"tool_calls": [{"name": "hang", "arguments": {"key": "x"}}]}, {"text": LANDED}]
    events, report = run(work, replies, features=[LookupFeature(NeverReturns())])
    end = kinds(events, "tool_end")[0]
    assert end.is_error and "no signal for 0.2 s" in end.preview
    assert_landed(work, events, report, "stall", "hang gave no signal for 0.2 s")


def test_stall_watchdog_cuts_a_silent_model_stream(tmp_path: Path) -> None:
    work = tmp_path / "w"
    write_config(work, "governance:\n  stall_s: 0.1\nretry:\n  max_attempts: 2\n  base_delay_s: 0.01\n")
    slow = SlowProvider(ScriptedProvider([{"text": "too slow"}]), delay_s=1.0)
    events, report = run(work, [], provider=slow)
    assert len(kinds(events, "retry")) == 1 and "no signal from the model for 0.1 s" in kinds(events, "retry")[0].reason
    assert events[-1].verdict == "failed" and "no signal from the model" in events[-1].message
    assert report["ceiling"]["kind"] == "stall"


def test_bad_governance_config_names_the_field() -> None:
    import pytest

    from arreio.engine.core.errors import ConfigError

    with pytest.raises(ConfigError, match="governance.max_tool_calls"):
        governance_settings(Settings(governance={"max_tool_calls": 0}))
    with pytest.raises(ConfigError, match="governance.policy.0.match"):
        governance_settings(Settings(governance={"policy": [{"tool": "shell", "match": "([", "action": "deny"}]}))
    with pytest.raises(ConfigError, match="governance.repeat_limits"):
        governance_settings(Settings(governance={"repeat_limits": {"often": 2}}))


def test_one_model_turn_is_said_in_the_singular(tmp_path: Path) -> None:
    """Regression: 'stopped after 1 model turns'."""
    work = tmp_path / "w"
    write_config(work, "max_steps: 1\n")
    (work / "d0").mkdir(parents=True, exist_ok=True)
    events, _ = run(work, ScriptedProvider([*listing(1), {"text": LANDED}]))
    assert "stopped after 1 model turn (max_steps 1)" in events[-1].message

"""The sub-agent tool, through the real pipeline with scripted providers: nested, tagged events; a
restricted tool set; counts that land on the parent; depth limits; the parent's ceilings in the child."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from arreio.engine.features.delegate import DelegateFeature
from arreio.engine.features.resolver import ToolReportFeature
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import RunHook, Stop
from arreio.engine.providers.testing import FixedClock, ScriptedProvider
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end


def delegate_call(task: str, **extra) -> dict:
    return {"tool_calls": [{"name": "delegate", "arguments": {"task": task, **extra}}]}


class Models:
    """A provider factory serving one scripted provider per model name (the parent's is 'offline')."""

    def __init__(self, **scripts: list[dict]) -> None:
        self.providers = {name.replace("_", "-"): ScriptedProvider(replies) for name, replies in scripts.items()}

    def __call__(self, model: str, **_):
        return self.providers[model]


def run(
    tmp_path: Path, models: Models, *, config: dict | None = None, features: list[Feature] = ()
) -> tuple[list, dict]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    if config:
        (work / ".arreio").mkdir(exist_ok=True)
        (work / ".arreio" / "config.yaml").write_text(json.dumps(config))
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home")}
    deps = PipelineDeps(
        clock=FixedClock(), provider_factory=models, features=[DelegateFeature(), ToolReportFeature(), *features]
    )
    events = asyncio.run(run_to_end(RunOptions(goal_text="# Delegate it\n", cwd=work, env=env), deps))
    report = json.loads((work / events[-1].report_path).read_text())
    return events, report


def test_a_sub_agent_runs_with_fresh_context_restricted_tools_and_nested_events(tmp_path: Path) -> None:
    models = Models(
        offline=[
            delegate_call("Write hello.txt saying hi", tools=["write_file", "read_file"], model="child"),
            {"text": "Delegated; done."},
        ],
        child=[
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "hello.txt", "content": "hi\n"}}]},
            {"text": "Wrote hello.txt."},
        ],
    )
    events, report = run(tmp_path, models)
    assert events[-1].verdict == "success"
    assert (tmp_path / "work" / "hello.txt").read_text() == "hi\n"

    kinds = [
        (e.type, getattr(e, "name", ""), e.agent)
        for e in events
        if e.type in ("tool_start", "tool_end", "unit_start", "unit_end")
    ]
    assert kinds == [
        ("unit_start", "", None),
        ("tool_start", "delegate", None),
        ("unit_start", "", "d1"),
        ("tool_start", "write_file", "d1"),
        ("tool_end", "write_file", "d1"),
        ("unit_end", "", "d1"),
        ("tool_end", "delegate", None),
        ("unit_end", "", None),
    ]
    on_disk = (tmp_path / "work" / events[-1].report_path).parent.joinpath("events.jsonl").read_text()
    assert '"type":"tool_start","call_id":"call_0_0","name":"write_file"' in on_disk and '"agent":"d1"' in on_disk
    child_text = "".join(e.text for e in events if e.type == "text_delta" and e.agent == "d1")
    assert child_text == "Wrote hello.txt."

    # fresh context: the child saw only its task, and only the tools it was given
    child_request = models.providers["child"].requests[0]
    assert [m.text for m in child_request.messages] == ["Write hello.txt saying hi"]
    assert sorted(t.name for t in child_request.tools) == ["read_file", "write_file"]
    assert any(b.name == "sub_agent" and "You are a sub-agent" in b.text for b in child_request.system)

    # what the parent got back: the answer and a summary
    result = models.providers["offline"].requests[1].messages[-1].parts[0]
    assert "Sub-agent d1 (child) ended success: 2 model turn(s), 1 tool call(s) (write_file×1)" in result.content
    assert result.content.endswith("Its answer:\nWrote hello.txt.")

    # counts land on the parent: tool calls, tools used, tokens
    assert report["tool_calls"] == 2 and report["tools_used"] == {"write_file": 1, "delegate": 1}
    assert report["input_tokens"] > 0 and events[-1].tool_calls == 2

    # the child's session sits beside the parent's, named after it
    sessions = tmp_path / "work" / ".arreio" / "sessions"
    child_file = sessions / f"{report['session_id']}.d1.jsonl"
    header = json.loads(child_file.read_text().splitlines()[0])
    assert header["parent"] == report["session_id"] and header["agent"] == "d1" and header["model"] == "child"


def test_child_tokens_are_added_to_the_parent(tmp_path: Path) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100}
    models = Models(
        offline=[{**delegate_call("count", model="child"), "usage": usage}, {"text": "ok", "usage": usage}],
        child=[{"text": "counted", "usage": {"input_tokens": 7000, "output_tokens": 700}}],
    )
    _, report = run(tmp_path, models)
    assert (report["input_tokens"], report["output_tokens"]) == (9000, 900)


def test_nested_sub_agents_are_tagged_by_path_and_depth_is_limited(tmp_path: Path) -> None:
    models = Models(
        offline=[delegate_call("level one", model="child"), {"text": "top done"}],
        child=[delegate_call("level two", model="grand"), {"text": "one done"}],
        grand=[{"text": "two done"}],
    )
    events, report = run(tmp_path, models)
    assert events[-1].verdict == "success"
    assert [e.agent for e in events if e.type == "unit_end"] == ["d1.d1", "d1", None]
    assert "delegate" in [t.name for t in models.providers["child"].requests[0].tools]
    assert "delegate" not in [t.name for t in models.providers["grand"].requests[0].tools]  # max_depth 2 reached
    sessions = tmp_path / "work" / ".arreio" / "sessions"
    assert (sessions / f"{report['session_id']}.d1.d1.jsonl").exists()


class SeenTools(ToolReportFeature):
    """The tool report that serves the run itself (no per-run copy), so the test can read what it resolved."""

    def start(self, ctx):
        return self


def test_max_depth_zero_means_no_delegate_tool(tmp_path: Path) -> None:
    models = Models(offline=[{"text": "alone"}])
    features_report = SeenTools()
    run(tmp_path, models, config={"tools": {"delegate": {"max_depth": 0}}}, features=[features_report])
    assert "delegate" not in [t.name for t in models.providers["offline"].requests[0].tools]
    assert "depth limit" in features_report.resolved.unavailable["delegate"]


def test_asking_for_a_tool_the_parent_lacks_is_an_error_result(tmp_path: Path) -> None:
    models = Models(offline=[delegate_call("x", tools=["read_file", "launch_rockets"], model="child"), {"text": "ok"}])
    _, report = run(tmp_path, models)
    result = models.providers["offline"].requests[1].messages[-1].parts[0]
    assert result.is_error and "unknown: launch_rockets" in result.content
    assert not (tmp_path / "work" / ".arreio" / "sessions" / f"{report['session_id']}.d1.jsonl").exists()


def test_a_failing_child_is_an_error_result_and_the_parent_goes_on(tmp_path: Path) -> None:
    models = Models(
        offline=[delegate_call("fail please", model="child"), {"text": "handled"}],
        child=[{"error": {"status": 400, "message": "bad request from the model API"}}],
    )
    events, _ = run(tmp_path, models)
    result = models.providers["offline"].requests[1].messages[-1].parts[0]
    assert result.is_error and "ended failed" in result.content and "bad request" in result.content
    assert events[-1].verdict == "success"


class ToolCallCeiling(RunHook):
    """A stand-in for governance: stop when the run's tool calls reach `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    async def before_model(self, turn, request):
        if turn.totals.tool_calls >= self.limit:
            return Stop("partial", 4, f"tool-call ceiling {self.limit} reached")
        return None


class Ceiling(Feature):
    name = "ceiling"

    def hooks(self, ctx):
        return [ToolCallCeiling(2)]


def test_the_parents_ceilings_count_the_childs_calls(tmp_path: Path) -> None:
    write = {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "a"}}]}
    models = Models(
        offline=[
            {"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
            delegate_call("write three files", model="child"),
            {"text": "never reached"},
        ],
        child=[write, write, write, {"text": "never reached"}],
    )
    events, report = run(tmp_path, models, features=[Ceiling()])
    # parent: 1 call; child: 1 call (total 2) → the child is stopped by the parent's ceiling, then the parent
    assert len(models.providers["child"].requests) == 1
    assert [e.agent for e in events if e.type == "unit_end"] == ["d1", None]
    assert events[-1].verdict == "partial" and events[-1].exit_code == 4
    assert report["tool_calls"] == 3  # list_dir, the child's write_file, delegate


def test_delegate_outside_a_run_is_a_readable_error() -> None:
    from arreio.engine.features.delegate import Delegate
    from arreio.engine.tools.chain import run_tool
    from arreio.engine.tools.registry import ToolRegistry
    from arreio.engine.tools.run_context import RunContext

    result = asyncio.run(run_tool(ToolRegistry([Delegate()]), "delegate", {"task": "x"}, RunContext(cwd=Path("."))))
    assert result.is_error and "only works inside an agent run" in result.content


@pytest.mark.parametrize("bad", [{"max_depth": -1}, {"max_steps": 0}, {"depth": 1}])
def test_delegate_config_mistakes_name_the_field(bad) -> None:
    from arreio.engine.core.errors import ConfigError
    from arreio.engine.features.delegate import parse_delegate

    with pytest.raises(ConfigError, match="tools.delegate."):
        parse_delegate({"delegate": bad})

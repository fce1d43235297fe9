"""The one resolver: families, prerequisites, allow/deny lists with patterns, schema-token accounting."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from pydantic import BaseModel

from arreio.engine.core.errors import ConfigError
from arreio.engine.core.tokens import estimate_tokens
from arreio.engine.features.delegate import DelegateFeature
from arreio.engine.features.resolver import ToolReportFeature, resolve_tools
from arreio.engine.features.web import WebFeature
from arreio.engine.loop.feature import Feature
from arreio.engine.providers.testing import FixedClock, ScriptedProvider, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from arreio.engine.tools.base import Tool, ToolResult
from arreio.engine.tools.resolved import schema_tokens
from tests.families.conftest import run_context


class _Args(BaseModel):
    q: str = ""


class Probe(Tool):
    input_model = _Args
    description = "A probe tool."

    def __init__(self, name: str, why_not: str | None = None) -> None:
        self.name = name  # type: ignore[misc]
        self.why_not = why_not

    def unavailable(self, ctx) -> str | None:
        return self.why_not

    async def execute(self, args, ctx) -> ToolResult:
        return ToolResult(self.name)


class Family(Feature):
    def __init__(self, name: str, tools: list[Tool]) -> None:
        self.name = name
        self._tools = tools

    def tools(self, ctx):
        return list(self._tools)


def families():
    return [
        Family("alpha", [Probe("alpha__one"), Probe("alpha__two"), Probe("alpha__off", "no key set")]),
        Family("beta", [Probe("beta_tool")]),
    ]


def test_every_family_enters_and_is_remembered(tmp_path: Path) -> None:
    resolved = resolve_tools(run_context(tmp_path), families())
    assert resolved.names()[:6] == ["read_file", "write_file", "edit_file", "list_dir", "grep", "shell"]
    assert resolved.families["shell"] == "builtin" and resolved.families["alpha__one"] == "alpha"
    assert resolved.families["beta_tool"] == "beta"


def test_a_tool_whose_prerequisite_fails_is_not_offered_and_says_why(tmp_path: Path) -> None:
    resolved = resolve_tools(run_context(tmp_path), families())
    assert "alpha__off" not in resolved and resolved.unavailable == {"alpha__off": "no key set"}
    asked = resolve_tools(run_context(tmp_path), families(), enable=["alpha__off", "read_file"])
    assert asked.names() == ["read_file"]
    assert asked.warnings == ["tool alpha__off is not offered in this run: no key set"]


def test_patterns_select_and_exclude_families(tmp_path: Path) -> None:
    ctx = run_context(tmp_path)
    assert resolve_tools(ctx, families(), enable=["alpha__*"]).names() == ["alpha__one", "alpha__two"]
    assert "alpha__one" not in resolve_tools(ctx, families(), disable=["alpha__*"])
    assert resolve_tools(ctx, families(), enable=["*"], disable=["shell", "beta_*"]).names()[-2:] == [
        "alpha__one",
        "alpha__two",
    ]
    with pytest.raises(ConfigError, match=r"unknown tool\(s\) gamma__\*"):
        resolve_tools(ctx, families(), enable=["gamma__*"])
    with pytest.raises(ConfigError, match=r"unknown tool\(s\) nope"):
        resolve_tools(ctx, families(), disable=["nope"])


def test_schema_tokens_follow_what_is_offered(tmp_path: Path) -> None:
    ctx = run_context(tmp_path)
    everything = resolve_tools(ctx, families())
    specs = json.dumps([s.model_dump() for s in everything.specs()], separators=(",", ":"))
    assert everything.schema_tokens == estimate_tokens(specs) > 0
    fewer = resolve_tools(ctx, families(), enable=["read_file"])
    assert 0 < fewer.schema_tokens < everything.schema_tokens
    assert resolve_tools(ctx, families(), enable=[]).schema_tokens == 0
    assert schema_tokens(everything.subset(["read_file"])) == fewer.schema_tokens


def test_web_search_is_offered_only_with_a_backend_and_key(tmp_path: Path) -> None:
    plain = resolve_tools(run_context(tmp_path), [WebFeature()])
    assert "web_fetch" in plain and "web_search" not in plain
    assert "no search backend configured" in plain.unavailable["web_search"]
    ctx = run_context(tmp_path, web={"search": {"backend": "brave"}})
    assert "BRAVE_API_KEY" in resolve_tools(ctx, [WebFeature()]).unavailable["web_search"]
    ctx.env = {**ctx.env, "BRAVE_API_KEY": "k"}
    assert "web_search" in resolve_tools(ctx, [WebFeature()])
    off = resolve_tools(run_context(tmp_path, web={"fetch": False}), [WebFeature()])
    assert "web_fetch" not in off


def test_the_report_carries_schema_tokens_and_warnings_reach_the_event_stream(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    provider = ScriptedProvider([{"tool_calls": [{"name": "read_file", "arguments": {"path": "x"}}]}, {"text": "ok"}])
    deps = PipelineDeps(
        clock=FixedClock(),
        provider_factory=provider_factory(provider),
        features=[WebFeature(), DelegateFeature(), ToolReportFeature()],
    )
    options = RunOptions(
        goal_text="# go\n",
        cwd=work,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)},
        tools=["read_file", "web_fetch", "web_search"],
    )
    events = asyncio.run(run_to_end(options, deps))
    report = json.loads((work / events[-1].report_path).read_text())
    offered = [t.name for t in provider.requests[0].tools]
    assert offered == ["read_file", "web_fetch"]
    expected = estimate_tokens(json.dumps([t.model_dump() for t in provider.requests[0].tools], separators=(",", ":")))
    assert report["tool_schema_tokens"] == expected
    warnings = [e for e in events if e.type == "warning"]
    assert len(warnings) == 1 and warnings[0].code == "tools" and "web_search is not offered" in warnings[0].message
    assert report["warnings"] == [warnings[0].message]

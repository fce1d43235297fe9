"""The protection chain: every failure becomes an error result, except cancellation."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from arreio.engine.core.config import Settings
from arreio.engine.tools.base import SETTINGS_TIMEOUT, Tool, ToolError, ToolResult
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext


class EchoInput(BaseModel):
    text: str
    times: int = 1


class Echo(Tool):
    name = "echo"
    description = "Repeat text."
    input_model = EchoInput

    async def execute(self, args: EchoInput, ctx: RunContext) -> ToolResult:
        return ToolResult(args.text * args.times)


class SleepInput(BaseModel):
    seconds: float


class Sleeper(Tool):
    name = "sleeper"
    description = "Sleep."
    input_model = SleepInput
    timeout_s = 0.05

    async def execute(self, args: SleepInput, ctx: RunContext) -> ToolResult:
        await asyncio.sleep(args.seconds)
        return ToolResult("awake")


class Failing(Tool):
    """Raises whatever `kind` says: a transient/definitive ToolError, a bug, its own timeout."""

    name = "failing"
    description = "Fail."

    class input_model(BaseModel):  # noqa: N801 — a ClassVar holding the model
        kind: str

    async def execute(self, args, ctx: RunContext) -> ToolResult:
        if args.kind == "transient":
            raise ToolError("server busy", transient=True)
        if args.kind == "definitive":
            raise ToolError("no such record")
        if args.kind == "own-timeout":
            raise TimeoutError("upstream took too long")
        if args.kind == "wrong-type":
            return "plain string"  # type: ignore[return-value]
        raise KeyError("boom")


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry([Echo(), Sleeper(), Failing()])


def run(registry: ToolRegistry, name: str, arguments, ctx: RunContext, **kw) -> ToolResult:
    return asyncio.run(run_tool(registry, name, arguments, ctx, **kw))


@pytest.fixture
def ctx(tmp_path: Path) -> RunContext:
    return RunContext(cwd=tmp_path)


def test_success_passes_through(registry, ctx) -> None:
    result = run(registry, "echo", {"text": "ab", "times": 2}, ctx)
    assert result == ToolResult("abab")


def test_unknown_tool_lists_available(registry, ctx) -> None:
    result = run(registry, "fly", {}, ctx)
    assert result.is_error
    assert "unknown tool 'fly'" in result.content
    assert "echo, sleeper, failing" in result.content


def test_missing_field_names_it(registry, ctx) -> None:
    result = run(registry, "echo", {}, ctx)
    assert result.is_error
    assert result.content == "echo: 'text' is required"


def test_real_builtin_message_shape(call) -> None:
    result = call("read_file")
    assert result.is_error and result.content == "read_file: 'path' is required"


def test_an_unprefixed_or_misspelt_name_gets_a_suggestion(ctx) -> None:
    registry = ToolRegistry([Echo(), Sleeper(), Failing()])
    registry.register(type("SqliteQuery", (Echo,), {"name": "sqlite__query"})())
    assert "Did you mean 'sqlite__query'?" in run(registry, "query", {"text": "x"}, ctx).content
    assert "Did you mean 'sleeper'?" in run(registry, "sleper", {}, ctx).content
    assert "Did you mean" not in run(registry, "zzz", {}, ctx).content


def test_bad_type_names_field_and_value(registry, ctx) -> None:
    result = run(registry, "echo", {"text": "a", "times": "many"}, ctx)
    assert result.is_error
    assert result.content.startswith("echo: 'times': ")
    assert "'many'" in result.content


def test_unknown_argument_is_reported_for_strict_builtins(call) -> None:
    result = call("read_file", path="a", file_path="a")
    assert result.is_error
    assert "'file_path' is not an argument of read_file" in result.content


def test_numbers_as_strings_are_coerced(registry, ctx) -> None:
    assert run(registry, "echo", {"text": "x", "times": "3"}, ctx).content == "xxx"


def test_arguments_not_an_object(registry, ctx) -> None:
    result = run(registry, "echo", ["x"], ctx)
    assert result.is_error and "arguments must be a JSON object" in result.content


def test_fixed_params_override_model_arguments(registry, ctx) -> None:
    result = run(registry, "echo", {"text": "model", "times": 1}, ctx, fixed={"text": "pinned"})
    assert result.content == "pinned"
    # and fill what the model left out
    assert run(registry, "echo", {}, ctx, fixed={"text": "z"}).content == "z"


def test_tool_timeout(registry, ctx) -> None:
    result = run(registry, "sleeper", {"seconds": 5}, ctx)
    assert result.is_error
    assert result.content == "sleeper: timed out after 0.05s"


def test_timeout_override(registry, ctx) -> None:
    assert run(registry, "sleeper", {"seconds": 0.1}, ctx, timeout_s=60).content == "awake"
    result = run(registry, "echo", {"text": "x"}, ctx, timeout_s=60)
    assert result.content == "x"


class PatientSleeper(Sleeper):
    """A tool that sets no timeout of its own: the configured `tools.timeout_s` bounds it."""

    name = "patient"
    timeout_s = SETTINGS_TIMEOUT


def test_a_tool_without_its_own_timeout_gets_the_configured_one(tmp_path: Path) -> None:
    registry = ToolRegistry([PatientSleeper()])
    quick = RunContext(cwd=tmp_path, settings=Settings(tools={"timeout_s": 0.05}))
    assert run(registry, "patient", {"seconds": 5}, quick).content == "patient: timed out after 0.05s"
    assert run(registry, "patient", {"seconds": 0.1}, RunContext(cwd=tmp_path)).content == "awake"  # default 60 s
    assert Tool.timeout_s == SETTINGS_TIMEOUT and Settings().tools.timeout_s == 60


def test_transient_tool_error_says_retry_may_work(registry, ctx) -> None:
    result = run(registry, "failing", {"kind": "transient"}, ctx)
    assert result.is_error
    assert "server busy" in result.content
    assert "may work if retried later" in result.content


def test_definitive_tool_error_says_do_not_repeat(registry, ctx) -> None:
    result = run(registry, "failing", {"kind": "definitive"}, ctx)
    assert result.is_error
    assert "no such record" in result.content
    assert "do not repeat the same call" in result.content


def test_unexpected_exception_is_caught(registry, ctx) -> None:
    result = run(registry, "failing", {"kind": "bug"}, ctx)
    assert result.is_error
    assert result.content == "internal error in tool failing: KeyError: 'boom'"


def test_tools_own_timeout_error_is_not_the_chain_timeout(registry, ctx) -> None:
    result = run(registry, "failing", {"kind": "own-timeout"}, ctx)
    assert result.content == "internal error in tool failing: TimeoutError: upstream took too long"


def test_wrong_return_type_is_caught(registry, ctx) -> None:
    result = run(registry, "failing", {"kind": "wrong-type"}, ctx)
    assert result.is_error and "returned str, not a ToolResult" in result.content


def test_cancelled_error_propagates(registry, ctx) -> None:
    async def scenario() -> str:
        task = asyncio.create_task(run_tool(registry, "sleeper", {"seconds": 5}, ctx, timeout_s=30))
        await asyncio.sleep(0.05)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "returned"

    assert asyncio.run(scenario()) == "cancelled"


class Chatty(Tool):
    """Emits while it runs: declared (streamed as a task) or not (awaited; events come before the result)."""

    name = "chatty"
    description = "Say three things."
    input_model = EchoInput

    async def execute(self, args: EchoInput, ctx: RunContext) -> ToolResult:
        for i in range(args.times):
            assert ctx.emit is not None
            ctx.emit(f"{args.text} {i}")
            await asyncio.sleep(0.05)
        return ToolResult("done")


class DeclaredChatty(Chatty):
    emits_events = True


@pytest.mark.parametrize("tool", [Chatty(), DeclaredChatty()], ids=["awaited", "streamed"])
def test_events_a_tool_emits_come_out_before_its_result_and_stall_bounds_silence(tmp_path: Path, tool: Tool) -> None:
    """A tool that does not declare `emits_events` is awaited (no task, no queue); what it
    emits anyway still comes out, before its result. The stall bound: silence for `stall_s` — a
    streaming tool's events reset it, an awaited tool's whole call is the silence."""
    from arreio.engine.tools.chain import stream_tool

    async def collect(stall_s: float) -> list:
        ctx = RunContext(cwd=tmp_path, settings=Settings(), env={})
        return [
            item
            async for item in stream_tool(
                ToolRegistry([tool]),
                tool.name,
                {"text": "hi", "times": 3},
                ctx,
                stall_s=stall_s,
                stalled=lambda name: ToolResult(f"{name} cut", is_error=True),
            )
        ]

    items = asyncio.run(collect(5.0))
    assert items[:3] == ["hi 0", "hi 1", "hi 2"] and items[3].content == "done"
    cut = asyncio.run(collect(0.12))  # three 0.05 s steps: 0.15 s in all, never 0.12 s silent
    if tool.emits_events:
        assert cut[-1].content == "done"
    else:
        assert cut[-1].content == "chatty cut" and cut[:-1] == ["hi 0", "hi 1", "hi 2"]

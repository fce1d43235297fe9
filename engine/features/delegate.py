"""`delegate`: a sub-agent as a tool.

The child is an ordinary `Runner` on a fresh session (`<parent-session>.d<N>` beside the parent's), so
it goes through the same turn loop, protection chain and hooks as the parent. What it may do is
narrowed, never widened: its tools are a subset of the parent's, and its own `delegate` sits one level
deeper (none past `tools.delegate.max_depth`, default 2).

Who counts stays outside who answers (docs/architecture.md invariant 7): the child's runner shares the run's
`Totals` (usage, tool calls, retries), so the ceiling hooks — which the child runs too — see the
whole run; only model turns are counted per agent, since each runner has its own step limit.

Its events stream live through `RunContext.emit`, each tagged `agent="d1"` (nested: `"d1.d2"`), between
a `unit_start` and a `unit_end` for the child. The model gets the child's final answer and a summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core import events as ev
from arreio.engine.core.config import parse_section
from arreio.engine.core.errors import ArreioError
from arreio.engine.core.ids import iso_ms
from arreio.engine.core.prompt import assemble_system
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.totals import Totals
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.tools.base import Tool, ToolError, ToolResult
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext

SUB_AGENT_BRIEF = """You are a sub-agent: another agent handed you the task below. Work on it with your tools,
on your own; nobody will answer questions. When done, answer with the result itself (what you found or
changed, with file paths), briefly. Your final answer is all the other agent will see."""


class DelegateSettings(BaseModel):
    """`tools.delegate` in config."""

    model_config = ConfigDict(extra="forbid")

    max_depth: int = Field(2, ge=0, le=5, description="How deep sub-agents may nest (0: no delegate tool).")
    max_steps: int = Field(20, ge=1, le=500, description="Model turns a sub-agent gets at most.")


def parse_delegate(tool_settings: Mapping[str, Any] | None) -> DelegateSettings:
    return parse_section(DelegateSettings, (tool_settings or {}).get("delegate"), "tools.delegate")


def delegate_settings(settings: Any) -> DelegateSettings:
    """The run's `tools.delegate` section (`RunContext.section(delegate_settings)`: once per run)."""
    return parse_section(DelegateSettings, settings.tools.delegate, "tools.delegate")


class DelegateInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1, description="All it needs: it sees nothing else.")
    tools: list[str] | None = None  # None: all of the parent's
    model: str | None = None
    max_steps: int | None = Field(None, ge=1)


class _Brief:
    name, stable = "sub_agent", True

    def render(self) -> str:
        return SUB_AGENT_BRIEF


class Delegate(Tool):
    name = "delegate"
    description = "Give a self-contained side task to a sub-agent with a fresh context; it returns its answer."
    input_model = DelegateInput
    repeat = "per_target"
    timeout_s = None  # the child's own ceilings bound it; a cancel still stops it at once
    emits_events = True  # the child's events stream out as it works

    def __init__(self, settings: DelegateSettings | None = None, *, depth: int = 0, path: str = "") -> None:
        self.settings = settings or DelegateSettings()
        self.depth = depth
        self.path = path

    def unavailable(self, ctx: Any) -> str | None:
        """The resolver's prerequisite: no sub-agents past the depth limit."""
        if self.depth >= self.settings.max_depth:
            return f"sub-agent depth limit reached (tools.delegate.max_depth = {self.settings.max_depth})"
        return None

    async def execute(self, args: DelegateInput, ctx: RunContext) -> ToolResult:
        parent = ctx.runner
        if parent is None:
            raise ToolError("delegate only works inside an agent run")
        if self.unavailable(ctx):
            raise ToolError(self.unavailable(ctx) or "")
        tools = self._child_tools(parent.tools, args.tools)
        model = args.model or parent.model
        provider = parent.provider if model == parent.model else self._provider(model, ctx)
        steps = min(args.max_steps or self.settings.max_steps, self.settings.max_steps)
        session, agent = self._child_session(parent, ctx, model, args.task, tools)
        child = parent.spawn(provider=provider, model=model, session=session, tools=tools, agent=agent)
        totals = parent.totals
        before = (totals.tool_calls, dict(totals.tools_used), totals.usage)
        emit = ctx.emit or (lambda event: None)
        emit(ev.UnitStart(unit_id=agent, goal=_title(args.task), agent=agent))
        end: ev.UnitEnd | None = None
        try:
            async for event in child.run(args.task, unit_id=agent, max_steps=steps):
                if event.type == "unit_end" and event.agent is None:
                    end = event
                emit(event if getattr(event, "agent", None) else event.model_copy(update={"agent": agent}))
        finally:
            session.close()
        assert end is not None  # a runner's stream ends in its unit_end unless it raised
        return _result(agent, session.id, model, end, totals, before)

    # -- the child's parts ---------------------------------------------------------------------------
    def _child_tools(self, parent_tools: ToolRegistry, wanted: list[str] | None) -> ToolRegistry:
        names = parent_tools.names() if wanted is None else list(dict.fromkeys(wanted))
        unknown = [n for n in names if n not in parent_tools]
        if unknown:
            raise ToolError(
                f"the sub-agent can only get tools you have; unknown: {', '.join(unknown)}; "
                f"yours: {', '.join(parent_tools.names())}"
            )
        chosen: list[Tool] = []
        for name in names:
            tool = parent_tools.get(name)
            if isinstance(tool, Delegate):
                deeper = Delegate(self.settings, depth=self.depth + 1)
                if deeper.unavailable(None):
                    continue  # at the depth limit the child simply has no delegate tool
                tool = deeper
            chosen.append(tool)  # type: ignore[arg-type]
        return ToolRegistry(chosen)

    def _provider(self, model: str, ctx: RunContext) -> Any:
        """Another model for the child, from the run's one provider factory."""
        try:
            return ctx.provider_factory(
                model, env=ctx.env, base_url=ctx.settings.base_url, session_id=None, script=None
            )
        except ArreioError as exc:
            raise ToolError(f"cannot start a sub-agent on model {model!r}: {exc.message}") from None

    def _child_session(
        self, parent: Any, ctx: RunContext, model: str, task: str, tools: ToolRegistry
    ) -> tuple[Any, str]:
        directory = parent.session.path.parent
        n = 1
        while (directory / f"{parent.session.id}.d{n}.jsonl").exists():
            n += 1
        agent = f"{self.path}.d{n}" if self.path else f"d{n}"
        now = ctx.clock.now()
        system = assemble_system(cwd=ctx.cwd, now=now, sources=[_Brief()], tool_names=tools.names())
        header = SessionHeader(
            id=f"{parent.session.id}.d{n}",
            created_at=iso_ms(now),
            cwd=str(ctx.cwd),
            model=model,
            title=_title(task),
            system=system,
            parent=parent.session.id,
            agent=agent,
        )
        session = Session.create(directory, header, redactor=ctx.redactor, durable=parent.session.durable)
        for tool in tools:  # a nested delegate names its children under this agent
            if isinstance(tool, Delegate):
                tool.path = agent
        return session, agent


def _title(task: str) -> str:
    first = next((ln.strip() for ln in task.splitlines() if ln.strip()), "")
    return first[:100]


def _result(
    agent: str, session_id: str, model: str, end: ev.UnitEnd, totals: Totals, before: tuple[int, dict[str, int], Any]
) -> ToolResult:
    calls_before, used_before, usage_before = before
    calls = totals.tool_calls - calls_before
    used = {n: c - used_before.get(n, 0) for n, c in totals.tools_used.items() if c - used_before.get(n, 0) > 0}
    tokens = (totals.usage.input_tokens - usage_before.input_tokens) + (
        totals.usage.output_tokens - usage_before.output_tokens
    )
    detail = ", ".join(f"{n}×{c}" for n, c in used.items())
    summary = (
        f"Sub-agent {agent} ({model}) ended {end.verdict}: {totals.steps(agent)} model turn(s), {calls} tool call(s)"
        + (f" ({detail})" if detail else "")
        + f", {tokens:,} tokens; its session is {session_id}."
    )
    if end.verdict == "success":
        return ToolResult(content=f"{summary}\n\nIts answer:\n{end.final_text or '(empty)'}")
    if end.verdict == "partial":
        return ToolResult(
            content=f"{summary}\nIt stopped early: {end.message}\n\nWhat it had so far:\n"
            f"{end.final_text or '(nothing)'}"
        )
    if end.verdict == "paused":
        return ToolResult(
            is_error=True,
            content=f"{summary}\nIt stopped to ask for approval of a sensitive action, "
            "which a sub-agent cannot wait for — do that step yourself.",
        )
    return ToolResult(
        is_error=True,
        content=f"{summary}\nIt failed: {end.message or 'no reason given'}"
        + (f"\n\nIts last words:\n{end.final_text}" if end.final_text else ""),
    )


class DelegateFeature(Feature):
    """The sub-agent tool. A sub-agent on its parent's model shares the parent's provider; one on
    another model gets its provider from the run's factory."""

    name = "delegate"

    def check(self, ctx: RunContext) -> None:
        ctx.section(delegate_settings)

    def tools(self, ctx: RunContext) -> list[Tool]:
        return [Delegate(ctx.section(delegate_settings))]

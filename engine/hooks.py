"""Extension points of the turn loop. Governance (ceilings, approvals, audit) and context engineering
(compaction, large results) plug in here, so the runner stays a short loop and every protection
wraps every call, whatever the tool's family or the model's provider (DESIGN.md invariant 7).

A hook overrides only what it needs; every method defaults to "no opinion". The runner asks hooks in
order and takes the first decision that is not None.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arreio.engine.conveyor.runner import Runner
    from arreio.engine.messages import ToolCallPart
    from arreio.engine.providers.base import ModelRequest, Usage
    from arreio.engine.tools.base import ToolResult


# -- decisions a hook can return ----------------------------------------------------------------
@dataclass
class Stop:
    """End the unit now. `events` are yielded first (e.g. a `ceiling` event)."""

    verdict: str
    exit_code: int
    message: str
    events: list[Any] = field(default_factory=list)


@dataclass
class Land:
    """The reserve turn before a hard ceiling: tools are withdrawn, `instruction` is added as a user
    message, the model answers once more, and the unit ends `partial` (exit 4) with `message`."""

    kind: str
    limit: float
    value: float
    message: str
    instruction: str


@dataclass
class Deny:
    """Do not run this call; the model receives `content` as its (error) result."""

    content: str


@dataclass
class Pause:
    """Stop before this call and wait for a human (approvals). `event` is yielded; the runner leaves
    this call and the ones after it without results — the hook must record them as pending."""

    event: Any
    message: str


class RunHook:
    """Base class: every method is a no-op. `runner` gives access to the session, counters, tools."""

    name = "hook"

    def at_unit_start(self, runner: Runner) -> list[Any]:
        """When a unit begins, before its first model call; returns events to yield (e.g. warnings
        gathered while the run was assembled)."""
        return []

    async def before_model(self, runner: Runner, request: ModelRequest) -> Stop | Land | None:
        """Before each model call (the reserve turn included: then `request.tools` is empty)."""
        return None

    def after_model(self, runner: Runner, usage: Usage) -> list[Any]:
        """After each model reply (retries included in `usage`); returns events to yield."""
        return []

    async def before_tool(self, runner: Runner, call: ToolCallPart) -> Deny | Pause | None:
        """Before a call executes."""
        return None

    def transform_result(self, runner: Runner, call: ToolCallPart, result: ToolResult) -> ToolResult:
        """Reshape a result before it enters the history (e.g. a large result becomes a handle)."""
        return result

    def after_tool(self, runner: Runner, call: ToolCallPart, result: ToolResult) -> list[Any]:
        """After a call's result is in the session; returns events to yield."""
        return []

    async def on_context_overflow(self, runner: Runner) -> list[Any] | None:
        """The provider said the request no longer fits. Shrink the history (compact) and return the
        events to yield — the runner then retries the call once — or None when nothing was done."""
        return None

    async def after_tool_round(self, runner: Runner) -> list[Any]:
        """After every result of a round is in the session (compaction happens here)."""
        return []


class WarningsHook(RunHook):
    """Turns warnings collected outside the event stream (a feature cannot yield events: an MCP server
    that died, a requested tool that is unavailable) into `warning` events, once each, as soon as the
    runner asks hooks for events (when the unit starts, after a model reply, after a tool call)."""

    name = "warnings"

    def __init__(self, drain: Callable[[], list[str]], code: str) -> None:
        self.drain = drain
        self.code = code

    def _events(self) -> list[Any]:
        from arreio.engine.events import Warning_

        return [Warning_(message=m, code=self.code) for m in self.drain()]

    def at_unit_start(self, runner: Any) -> list[Any]:
        return self._events()

    def after_model(self, runner: Any, usage: Any) -> list[Any]:
        return self._events()

    def after_tool(self, runner: Any, call: Any, result: Any) -> list[Any]:
        return self._events()

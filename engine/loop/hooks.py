"""Extension points of the turn loop. Governance (ceilings, approvals, audit) and context engineering
(compaction, large results) plug in here, so the runner stays a short loop and every protection
wraps every call, whatever the tool's family or the model's provider (docs/architecture.md invariant 7).

A hook overrides only what it needs; every method defaults to "no opinion". It sees the runner
through a narrow `Turn` view — the session, the model, the tools, the counters — never the runner
itself. `Hooks` is the one place they are asked, in order: the first decision that is not None wins;
events are gathered from all of them; results pass through each in turn.

A hook returns what it wants, it never changes what it was shown: the request a hook gets before a
model call is the runner's, and a hook that wants it sent otherwise (fewer tools, a smaller reply
cap, the history as a compaction left it) returns a `Rewrite`, which the runner applies before the
next hook is asked (tests/test_architecture.py holds this).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from arreio.engine.core import events as ev

if TYPE_CHECKING:
    from arreio.engine.core.config import Settings
    from arreio.engine.core.messages import Message, ToolCallPart
    from arreio.engine.core.model_io import Done, ModelRequest, ProviderError, SystemBlock, ToolSpec, Usage
    from arreio.engine.core.ports import Provider
    from arreio.engine.loop.totals import Totals
    from arreio.engine.loop.watchdog import Stall
    from arreio.engine.session.file import Session
    from arreio.engine.tools.base import ToolResult
    from arreio.engine.tools.registry import ToolRegistry
    from arreio.engine.tools.run_context import RunContext


class Turn(Protocol):
    """What a hook may see of the runner asking it. Read-only, except the session (hooks append
    records to it and compaction rewrites it). A model call a hook makes (a summariser's) is counted
    by the runner: the hook returns it as a `Spent` (engine/loop/totals.py) among its events."""

    @property
    def agent(self) -> str:
        """ "" for the run's own runner, "d1", "d1.d2", ... for sub-agents (per-runner state keys on it)."""

    @property
    def session(self) -> Session: ...
    @property
    def model(self) -> str: ...
    @property
    def provider(self) -> Provider: ...
    @property
    def tools(self) -> ToolRegistry: ...
    @property
    def system(self) -> list[SystemBlock]: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def ctx(self) -> RunContext: ...
    @property
    def totals(self) -> Totals:
        """The run's shared counters (sub-agents add to the same ones), to read: the runner counts."""

    @property
    def unit_steps(self) -> int:
        """Model turns this runner has taken in the running unit."""

    @property
    def unit_limit(self) -> int:
        """The running unit's step limit."""

    @property
    def last_request(self) -> ModelRequest | None:
        """The request as last sent, after every hook's changes."""

    @property
    def last_done(self) -> Done | None:
        """How the last model reply ended: its stop reason, usage and error (None before any)."""

    @property
    def last_error(self) -> ProviderError | None:
        """Why the last model call failed (None: it did not), e.g. the overflow `on_context_overflow` answers."""

    @property
    def stalls(self) -> list[Stall]:
        """The watchdog's cuts so far."""


# -- decisions a hook can return ----------------------------------------------------------------
@dataclass
class Stop:
    """End the unit now. `events` are yielded first (e.g. a `ceiling` event)."""

    verdict: ev.Verdict
    exit_code: int
    message: str
    events: list[ev.Event] = field(default_factory=list)


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
class Rewrite:
    """Send this model call otherwise; a field left None stays as it was. `messages`: the history to
    send (a hook that changed the session — a compaction, an added message — sends the session's
    messages as they now are); `tools`: the tools offered; `max_tokens`: the reply cap. `events` are
    yielded before the call (e.g. the `compaction` that made room for it). The next hook is asked
    with the request rewritten."""

    messages: list[Message] | None = None
    tools: list[ToolSpec] | None = None
    max_tokens: int | None = None
    events: list[ev.Event] = field(default_factory=list)

    def applied_to(self, request: ModelRequest) -> ModelRequest:
        """`request` with these changes: a new request (the one given is left as it was)."""
        update: dict[str, Any] = {}
        if self.messages is not None:
            update["messages"] = self.messages
        if self.tools is not None:
            update["tools"] = self.tools
        if self.max_tokens is not None:
            update["max_tokens"] = self.max_tokens
        return request.model_copy(update=update) if update else request


@dataclass
class Asked:
    """What the hooks said before a model call: the request to send (every `Rewrite` applied), the
    events to yield first, and a `Stop` or `Land` when one hook decided so (the hooks after it are
    not asked)."""

    request: ModelRequest
    events: list[ev.Event]
    decision: Stop | Land | None = None


@dataclass
class Deny:
    """Do not run this call; the model receives `content` as its (error) result."""

    content: str


@dataclass
class Pause:
    """Stop before this call and wait for a human (approvals). `event` is yielded; the runner leaves
    this call and the ones after it without results — the hook must record them as pending."""

    event: ev.ApprovalRequired
    message: str


@dataclass
class Ask:
    """Ask a person now, at the terminal: the runner yields `event` first (so the question is shown
    after everything streamed before it), then calls `answer()` — None runs the call, a `Deny` does
    not. `answer()` raising `asyncio.CancelledError` (Ctrl-C at the question) cancels the run."""

    event: ev.ApprovalRequired
    answer: Callable[[], Deny | None]


class RunHook:
    """Base class: every method is a no-op."""

    name = "hook"

    def at_unit_start(self, turn: Turn) -> list[ev.Event]:
        """When a unit begins, before its first model call; returns events to yield (e.g. warnings
        gathered while the run was assembled)."""
        return []

    async def before_model(self, turn: Turn, request: ModelRequest) -> Stop | Land | Rewrite | None:
        """Before each model call (the reserve turn included: then `request.tools` is empty). The
        request is read-only: a hook that wants it sent otherwise returns a `Rewrite`."""
        return None

    def after_model(self, turn: Turn, usage: Usage) -> list[ev.Event]:
        """After each model reply (retries included in `usage`); returns events to yield."""
        return []

    async def before_tool(self, turn: Turn, call: ToolCallPart) -> Deny | Pause | Ask | None:
        """Before a call executes."""
        return None

    def transform_result(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> ToolResult:
        """Reshape a result before it enters the history (e.g. a large result becomes a handle)."""
        return result

    async def amend_result(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> ToolResult:
        """After `transform_result`, for a hook that must wait on something (a user's hook process)
        before the result enters the history; returns the result, changed or not."""
        return result

    def after_tool(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> list[ev.Event]:
        """After a call's result is in the session; returns events to yield."""
        return []

    async def on_context_overflow(self, turn: Turn) -> list[ev.Event] | None:
        """The provider said the request no longer fits. Shrink the history (compact) and return the
        events to yield — the runner then retries the call once — or None when nothing was done."""
        return None

    async def after_tool_round(self, turn: Turn) -> list[ev.Event]:
        """After every result of a round is in the session (compaction happens here)."""
        return []


class Hooks:
    """The hooks of a run, asked as one: decisions from the first that has one, events from all."""

    def __init__(self, hooks: Sequence[RunHook] = ()) -> None:
        self.hooks = list(hooks)
        # For each moment, only the hooks that do something then, in order: a run's ten or so hooks
        # each override a few of the eight methods, and asking every hook every time (an await of a
        # no-op coroutine for the async ones) was ~50 calls a turn for nothing.
        self._asked = {name: [hook for hook in self.hooks if overrides(hook, RunHook, name)] for name in _MOMENTS}

    @property
    def amends(self) -> bool:
        """Whether any hook amends results (most runs: none, and no await is spent on each call)."""
        return bool(self._asked["amend_result"])

    def at_unit_start(self, turn: Turn) -> list[ev.Event]:
        return [e for hook in self._asked["at_unit_start"] for e in hook.at_unit_start(turn)]

    async def before_model(self, turn: Turn, request: ModelRequest) -> Asked:
        """Each hook in turn, each shown the request as the ones before it rewrote it; a `Stop` or
        `Land` ends the asking (the events gathered so far are yielded before its own)."""
        events: list[ev.Event] = []
        for hook in self._asked["before_model"]:
            decision = await hook.before_model(turn, request)
            if decision is None:
                continue
            if isinstance(decision, Rewrite):
                request = decision.applied_to(request)
                events += decision.events
                continue
            return Asked(request, events, decision)
        return Asked(request, events)

    def after_model(self, turn: Turn, usage: Usage) -> list[ev.Event]:
        return [e for hook in self._asked["after_model"] for e in hook.after_model(turn, usage)]

    async def before_tool(self, turn: Turn, call: ToolCallPart) -> Deny | Pause | Ask | None:
        for hook in self._asked["before_tool"]:
            verdict = await hook.before_tool(turn, call)
            if verdict is not None:
                return verdict
        return None

    def transform_result(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> ToolResult:
        for hook in self._asked["transform_result"]:
            result = hook.transform_result(turn, call, result)
        return result

    async def amend_result(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> ToolResult:
        for hook in self._asked["amend_result"]:
            result = await hook.amend_result(turn, call, result)
        return result

    def after_tool(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> list[ev.Event]:
        return [e for hook in self._asked["after_tool"] for e in hook.after_tool(turn, call, result)]

    async def on_context_overflow(self, turn: Turn) -> list[ev.Event] | None:
        for hook in self._asked["on_context_overflow"]:
            events = await hook.on_context_overflow(turn)
            if events is not None:
                return events
        return None

    async def after_tool_round(self, turn: Turn) -> list[ev.Event]:
        return [e for hook in self._asked["after_tool_round"] for e in await hook.after_tool_round(turn)]


_MOMENTS = (
    "at_unit_start",
    "before_model",
    "after_model",
    "before_tool",
    "transform_result",
    "amend_result",
    "after_tool",
    "on_context_overflow",
    "after_tool_round",
)


def overrides(obj: Any, base: type, name: str) -> bool:
    """Whether `obj` does anything at `name`: its class (or the object itself) defines the method
    other than `base`'s no-op. An object that is no `base` (a duck-typed one) always counts. Hooks
    and the pipeline's event observers ask it once, so a turn does not call no-ops."""
    if not isinstance(obj, base):
        return True
    return name in vars(obj) or getattr(type(obj), name) is not getattr(base, name)


class WarningsHook(RunHook):
    """Turns warnings collected outside the event stream (a feature cannot yield events: an MCP server
    that died, a requested tool that is unavailable) into `warning` events, once each, as soon as the
    runner asks hooks for events (when the unit starts, after a model reply, after a tool call)."""

    name = "warnings"

    def __init__(self, drain: Callable[[], list[str]], code: str) -> None:
        self.drain = drain
        self.code = code

    def _events(self) -> list[ev.Event]:
        return [ev.Warning_(message=m, code=self.code) for m in self.drain()]

    def at_unit_start(self, turn: Turn) -> list[ev.Event]:
        return self._events()

    def after_model(self, turn: Turn, usage: Any) -> list[ev.Event]:
        return self._events()

    def after_tool(self, turn: Turn, call: Any, result: Any) -> list[ev.Event]:
        return self._events()

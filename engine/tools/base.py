"""The tool interface (docs/architecture.md section 6).

A tool is a name, a description for the model, a pydantic input model (its JSON schema is what the
model sees), and `async execute(input, ctx) -> ToolResult`. It declares whether it is `sensitive`
(governance may pause before it runs) and how often the same call may repeat.

Tools never talk to the model about exceptions: they return `ToolResult(is_error=True)` or raise
`ToolError` (a definitive or transient failure the chain turns into an error result). Anything else
they raise is caught by the protection chain (`engine/tools/chain.py`) and reported as data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel

from arreio.engine.core.messages import ImagePart

if TYPE_CHECKING:
    from arreio.engine.tools.run_context import RunContext

Repeat = Literal["once", "few", "paged", "per_target", "reads"]  # reads: an MCP read-only tool (ceilings)
PREVIEW_CHARS = 160
# A tool whose `timeout_s` is this takes the configured `tools.timeout_s` (the default).
SETTINGS_TIMEOUT = "tools.timeout_s"


@dataclass
class ToolResult:
    content: str
    is_error: bool = False
    images: list[ImagePart] = field(default_factory=list)
    # The whole output when `content` had to be cut for the model (never sent as is): a hook that
    # stores large results as a queryable set stores this, so the set is complete.
    full: str | None = None
    # What the `tool_end` line says instead of the content's first line, when that line would hide
    # what happened (a shell call that timed out showed only "(no output)").
    headline: str | None = None

    @property
    def preview(self) -> str:
        """The first line (or `headline`), cut at PREVIEW_CHARS, for a `tool_end` event."""
        text = self.headline if self.headline is not None else self.content
        line = text.strip().splitlines()[0] if text.strip() else ""
        return line[:PREVIEW_CHARS] + ("…" if len(line) > PREVIEW_CHARS else "")


class ToolError(Exception):
    """A failure the tool understands. `transient=True` means trying again later may work."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient


class Tool:
    """Base class for tools. Subclasses set the class attributes and implement `execute`."""

    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]
    sensitive: ClassVar[bool] = False
    # Declares the tool changes nothing outside the harness: checkpoints skip its rounds, and several
    # calls of read-only (non-sensitive) tools in one reply run concurrently (engine/loop/toolround.py),
    # so such a tool must be safe to run alongside another call. An MCP tool says so through its
    # server's readOnlyHint.
    read_only: ClassVar[bool] = False
    # Runs in a program arreio does not hold (an MCP server): what it declares about itself (`read_only`)
    # is that program's word — good enough to schedule and count calls, never a reason to skip a
    # safeguard: its rounds are checkpointed whatever it says.
    remote: ClassVar[bool] = False
    repeat: ClassVar[Repeat] = "few"
    # Seconds the chain allows one call: a number, None (no chain timeout: the tool bounds itself),
    # or SETTINGS_TIMEOUT (the configured `tools.timeout_s`).
    timeout_s: ClassVar[float | None | Literal["tools.timeout_s"]] = SETTINGS_TIMEOUT
    # Streams events while it runs (`ctx.emit`: a sub-agent's own stream). Such a call runs as a task
    # the runner listens to; any other is simply awaited (engine/tools/chain.py `stream_tool`).
    emits_events: ClassVar[bool] = False

    async def execute(self, args: Any, ctx: RunContext) -> ToolResult:  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def input_schema(cls) -> dict[str, Any]:
        from arreio.engine.tools.schema import compact_schema  # what the model reads: no token spent on titles

        return compact_schema(cls.input_model.model_json_schema())

"""The tool interface (DESIGN.md section 6).

A tool is a name, a description for the model, a pydantic input model (its JSON schema is what the
model sees), and `async execute(input, ctx) -> ToolResult`. It declares whether it is `sensitive`
(governance may pause before it runs) and how often the same call may repeat.

Tools never talk to the model about exceptions: they return `ToolResult(is_error=True)` or raise
`ToolError` (a definitive or transient failure the chain turns into an error result). Anything else
they raise is caught by the protection chain (`engine/tools/chain.py`) and reported as data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from arreio.engine.messages import ImagePart
from arreio.engine.ports import Clock, SystemClock

Repeat = Literal["once", "few", "paged", "per_target"]


@dataclass
class ToolResult:
    content: str
    is_error: bool = False
    images: list[ImagePart] = field(default_factory=list)
    # The whole output when `content` had to be cut for the model (never sent as is): a hook that
    # stores large results as a queryable set stores this, so the set is complete.
    full: str | None = None


class ToolError(Exception):
    """A failure the tool understands. `transient=True` means trying again later may work."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient


@dataclass
class ToolContext:
    """What a tool may touch: the working directory (its root), an explicit environment for
    subprocesses (never the mutated process env), the clock, and limits from config."""

    root: Path
    env: Mapping[str, str] = field(default_factory=dict)
    clock: Clock = field(default_factory=SystemClock)
    session_id: str = ""
    run_id: str = ""
    turn: int = 0  # the runner's step number; tools that cap failures "per turn" key on it
    settings: Mapping[str, Any] = field(default_factory=dict)
    # Streams events out of a long tool (a sub-agent's own events) while it runs; the runner sets it.
    emit: Callable[[Any], None] | None = None
    # The runner running this tool (set by the runner); the sub-agent tool reaches the parent through it.
    parent: Any = None


class Tool:
    """Base class for tools. Subclasses set the class attributes and implement `execute`."""

    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]
    sensitive: ClassVar[bool] = False
    repeat: ClassVar[Repeat] = "few"
    timeout_s: ClassVar[float | None] = 60.0

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def input_schema(cls) -> dict[str, Any]:
        schema = cls.input_model.model_json_schema()
        schema.pop("title", None)
        return schema

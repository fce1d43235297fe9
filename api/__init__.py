"""arreio for programs: run a goal and read its events, or drain it to a result.

    from arreio.api import run, run_to_result

    async for event in run("fix the failing test", cwd="~/proj"):
        if event.type == "text_delta":
            print(event.text, end="")
    result = await run_to_result("add a changelog entry", cwd="~/proj", max_steps=20)

The events are the public API: the same ones `arreio run --json` prints (`type` names them; a name is
never renamed). See docs/embedding.md.
"""

from arreio.api.running import Approve, Result, run, run_sync, run_to_result
from arreio.engine.core.errors import ArreioError, ConfigError, SessionError, UsageError
from arreio.engine.core.events import (
    ApprovalRequired,
    Ceiling,
    Compaction,
    Done,
    Event,
    GateResult,
    LearningPassDone,
    ModelSwitch,
    Retry,
    RunStart,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolStart,
    UnitEnd,
    UnitStart,
    Warning_,
)

__all__ = [
    "ApprovalRequired",
    "Approve",
    "ArreioError",
    "Ceiling",
    "Compaction",
    "ConfigError",
    "Done",
    "Event",
    "GateResult",
    "LearningPassDone",
    "ModelSwitch",
    "Result",
    "Retry",
    "RunStart",
    "SessionError",
    "TextDelta",
    "ThinkingDelta",
    "ToolEnd",
    "ToolStart",
    "UnitEnd",
    "UnitStart",
    "UsageError",
    "Warning_",
    "run",
    "run_sync",
    "run_to_result",
]

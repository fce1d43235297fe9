"""Small protocols the engine depends on; constructors take them, defaults are the real thing.

The engine never imports `memory`, `learning`, `curator` or `cli`: it sees them through these ports
(docs/architecture.md section 1). Fakes for tests live in `engine/providers/testing.py`.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from arreio.engine.core.model_io import ModelRequest, StreamEvent


@runtime_checkable
class Clock(Protocol):
    """Where time comes from. Logic never reads the wall clock itself."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a monotonic scale, for durations and deadlines."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait (a fake clock advances instead)."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        import asyncio  # lazy: the CLI's entry reads the environment through this module before any loop runs

        await asyncio.sleep(seconds)


# Where the environment comes from: a mapping handed down from the entry point (`RunOptions.env`,
# `RunContext.env`), never read from the process by logic, never written. A child process gets it
# as its `env=`; a test passes its own.
Env = Mapping[str, str]


def process_env() -> dict[str, str]:
    """The real `Env`: a copy of this process's environment, taken when asked (the one reader of
    `os.environ` — tests/test_architecture.py holds the few others to their reasons)."""
    return dict(os.environ)


@runtime_checkable
class Provider(Protocol):
    """One model backend. `stream` always ends with a `Done` event; failures are encoded there
    (`Done.error`), never raised — except `asyncio.CancelledError`, which always propagates."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...


@runtime_checkable
class SystemPromptBlockSource(Protocol):
    """Something that contributes a block to the system prompt at session start (the frozen memory
    snapshot, the skills index, ...). Returns None when it has nothing to say (the block is left out)."""

    name: str
    stable: bool

    def render(self) -> str | None: ...

    # Optional: `instruction_files`, the project instruction files (AGENTS.md…) a block was read from;
    # the new session's header keeps them, so a run and `arreio sessions show` can say what it obeys.


class PromptScreen(Protocol):
    """Reads third-party text before it enters the system prompt or a tool's description for the rest
    of a session (an MCP server's `instructions`, its tools' descriptions): returns why the text must
    be left out — a category and a rule, never the text itself — or None when it may go in. The real
    one is the memory scan (`arreio.memory.scan.prompt_screen`, wired by `cli/deps.py`)."""

    def __call__(self, text: str) -> str | None: ...


class RunChanges(Protocol):
    """What a run did to the working tree, as recorded outside the model's words (the checkpoints)."""

    def state(self, path: str) -> str | None:
        """For `path` (relative to the working directory, POSIX): "changed" when the run changed it,
        "unchanged" when the records hold it as it was before the run, None when they cannot tell
        (not recorded: ignored by `.gitignore`, too big, checkpoints off)."""
        ...

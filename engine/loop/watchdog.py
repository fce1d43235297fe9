"""The stall watchdog: the outer time bound on model streams and tools ("no event for N seconds").

The chain has per-tool timeouts and providers have HTTP timeouts; the watchdog is the bound behind
them, for the model call that never sends another chunk and the tool that never returns (or a tool
with no timeout of its own). Any chunk, or any event a tool emits, resets the clock.

- A silent model stream is cut and ends in a retryable error (docs/architecture.md section 5: a timeout is
  retried with backoff; when retries run out the run fails with the reason).
- A silent tool is cancelled and the model gets an error result; the ceilings hook then lands the
  run with a reserve turn (`ceiling` kind `stall`, exit 4).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arreio.engine.core.model_io import Done, ProviderError
from arreio.engine.tools.base import ToolResult
from arreio.engine.walls.settings import governance_settings

if TYPE_CHECKING:
    from arreio.engine.core.config import Settings


@dataclass
class Stall:
    """One cut: what went silent (`model` or the tool's name) and for how long."""

    what: str
    seconds: float


class Silence:
    """How long a stream has been waiting for its next chunk, with one timer for the whole stream
    (an `asyncio.timeout` around every chunk cost ~4 µs and two `getpid` calls each, five
    or so a turn). The timer is armed at the first wait; when it fires it cancels the task only if
    the stream has been waiting `stall_s` by then, and otherwise sets itself for when that would be —
    so a chunk costs one clock read. It never fires while the consumer holds a chunk (between
    `heard` and the next `waiting`): a cancel then would land in the consumer's code, not in the
    stream's await. Made inside the task that reads the stream."""

    def __init__(self, stall_s: float) -> None:
        self.stall_s = stall_s
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("the stall watchdog reads a stream inside a task")
        self._task = task
        self._cancelling = task.cancelling()  # cancels already asked for before ours
        self._since: float | None = None  # when the current wait began; None: not waiting
        self._handle: asyncio.TimerHandle | None = None
        self._fired = False
        self._slack = time.get_clock_info("monotonic").resolution  # the loop runs timers that early

    def waiting(self) -> None:
        """The stream awaits its next chunk from now."""
        self._since = self._loop.time()
        if self._handle is None:
            self._handle = self._loop.call_at(self._since + self.stall_s, self._check)

    def heard(self) -> None:
        """A chunk came: the wait is over."""
        self._since = None
        if self._fired:  # the stream swallowed our cancel and went on: the count goes back
            self._fired = False
            self._task.uncancel()

    def cut(self) -> bool:
        """Whether the CancelledError that ended the wait was this timer's alone (a stall, not a
        Ctrl-C or a caller's cancel, which then goes on)."""
        if not self._fired:
            return False
        self._fired = False
        return self._task.uncancel() <= self._cancelling

    def close(self) -> None:
        """The stream is over: the timer is dropped, and a cancel of ours that the stream turned into
        some other error is taken back (as `asyncio.timeout` does), so the task is not left cancelling."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._fired:
            self._fired = False
            self._task.uncancel()

    def _check(self) -> None:
        self._handle = None
        if self._since is None:
            return  # not waiting: the next wait arms the timer again
        due = self._since + self.stall_s
        if self._loop.time() + self._slack >= due:
            self._fired = True
            self._task.cancel()
        else:
            self._handle = self._loop.call_at(due, self._check)


@dataclass
class Watchdog:
    stall_s: float | None = None  # None: no bound (a runner built without governance settings)
    stalls: list[Stall] = field(default_factory=list)

    @classmethod
    def from_settings(cls, settings: Settings) -> Watchdog:

        return cls(governance_settings(settings).stall_s)

    async def stream(self, source: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """Pass a provider stream through; a gap longer than `stall_s` ends it with a retryable error."""
        iterator = aiter(source)
        silence = None if self.stall_s is None else Silence(self.stall_s)
        try:
            while True:
                if silence is not None:
                    silence.waiting()
                try:
                    chunk = await anext(iterator)
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if silence is None or not silence.cut():
                        raise
                    self.stalls.append(Stall("model", float(self.stall_s or 0)))
                    message = f"no signal from the model for {self.stall_s:g} s (stall watchdog)"
                    yield Done(stop_reason="error", error=ProviderError(kind="retryable", message=message))
                    return
                if silence is not None:
                    silence.heard()
                yield chunk
        finally:
            if silence is not None:
                silence.close()
            closer = getattr(iterator, "aclose", None)
            if closer is not None:
                await closer()

    def tool_stalled(self, name: str) -> ToolResult:
        """The result a silent tool gets once it is cut off."""
        self.stalls.append(Stall(name, float(self.stall_s or 0)))
        return ToolResult(
            f"{name}: no signal for {self.stall_s:g} s; the call was stopped by the stall watchdog "
            "(it may or may not have taken effect — check before repeating)",
            is_error=True,
        )

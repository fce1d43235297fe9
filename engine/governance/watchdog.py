"""The stall watchdog: the outer time bound on model streams and tools ("no event for N seconds").

The chain has per-tool timeouts and providers have HTTP timeouts; the watchdog is the bound behind
them, for the model call that never sends another chunk and the tool that never returns (or a tool
with no timeout of its own). Any chunk, or any event a tool emits, resets the clock.

- A silent model stream is cut and ends in a retryable error (DESIGN.md section 5: a timeout is
  retried with backoff; when retries run out the run fails with the reason).
- A silent tool is cancelled and the model gets an error result; the ceilings hook then lands the
  run with a reserve turn (`ceiling` kind `stall`, exit 4).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arreio.engine.governance.settings import governance_settings
from arreio.engine.providers.base import Done, ProviderError
from arreio.engine.tools.base import ToolResult

if TYPE_CHECKING:
    from arreio.engine.config import Settings


@dataclass
class Stall:
    """One cut: what went silent (`model` or the tool's name) and for how long."""

    what: str
    seconds: float


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
        try:
            while True:
                timer = asyncio.timeout(self.stall_s)
                try:
                    async with timer:
                        chunk = await anext(iterator)
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    if not timer.expired():
                        raise
                    self.stalls.append(Stall("model", float(self.stall_s or 0)))
                    message = f"no signal from the model for {self.stall_s:g} s (stall watchdog)"
                    yield Done(stop_reason="error", error=ProviderError(kind="retryable", message=message))
                    return
                yield chunk
        finally:
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

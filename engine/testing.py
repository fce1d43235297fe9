"""Fakes that ship with the code (DESIGN.md section 8): tests and users' own test suites use them.

- `FixedClock`: time stands still until told to move; `sleep` advances it instead of waiting.
- `ScriptedProvider`: replies from a list (the same class `--script` uses), re-exported here.
- `SlowProvider`: wraps a provider and pauses before each chunk, to cancel a run mid-stream.
- `offline_deps()`: pipeline deps with a fixed clock and a scripted or offline provider.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from typing import Any

from arreio.engine.ports import Provider
from arreio.engine.providers.base import ModelRequest, StreamEvent
from arreio.engine.providers.scripted import ScriptedProvider, ScriptedReply

__all__ = ["FixedClock", "ScriptedProvider", "ScriptedReply", "SlowProvider", "provider_factory"]


class FixedClock:
    """A clock that only moves when told (`advance`) or when something sleeps on it."""

    def __init__(self, start: datetime | str = "2026-06-27T16:00:00+00:00") -> None:
        self._now = datetime.fromisoformat(start) if isinstance(start, str) else start
        if self._now.tzinfo is None:
            self._now = self._now.replace(tzinfo=timezone.utc)
        self._mono = 1000.0
        self.slept: list[float] = []

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
        self._mono += seconds

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(seconds)
        await asyncio.sleep(0)  # still a real await point: cancellation can land here


class SlowProvider:
    """Delays every chunk of another provider by `delay_s` real seconds."""

    def __init__(self, inner: Provider, delay_s: float) -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.name = f"slow-{inner.name}"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for chunk in self.inner.stream(request):
            await asyncio.sleep(self.delay_s)
            yield chunk


def provider_factory(provider: Provider):
    """A `PipelineDeps.provider_factory` that always returns `provider` (whatever the model string)."""

    def make(model: str, **_: Any) -> Provider:
        return provider

    return make

"""Fakes that ship with the code (docs/architecture.md section 8): tests and users' own test suites use them.

- `FixedClock`: time stands still until told to move; `sleep` advances it instead of waiting.
- `ScriptedProvider`: replies from a list (the same class `--script` uses), re-exported here.
- `SlowProvider`: wraps a provider and pauses before each chunk, to cancel a run mid-stream.
- `provider_factory(provider)`: a `PipelineDeps.provider_factory` serving that one provider.
- `InMemoryStore` / `InMemoryStores`: the learning pass's target stores (memory, user) in a list,
  with the real store's refusal when told to refuse.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

from arreio.engine.core.model_io import ModelRequest, StreamEvent
from arreio.engine.core.ports import Provider
from arreio.engine.providers.scripted import ScriptedProvider, ScriptedReply

__all__ = [
    "FixedClock",
    "InMemoryStore",
    "InMemoryStores",
    "ScriptedProvider",
    "ScriptedReply",
    "SlowProvider",
    "provider_factory",
]


class FixedClock:
    """A clock that only moves when told (`advance`) or when something sleeps on it."""

    def __init__(self, start: datetime | str = "2026-06-27T16:00:00+00:00") -> None:
        self._now = datetime.fromisoformat(start) if isinstance(start, str) else start
        if self._now.tzinfo is None:
            self._now = self._now.replace(tzinfo=UTC)
        self._mono = 1000.0
        self.slept: list[float] = []

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float = 0.0, **delta: float) -> None:
        """Move on by `seconds` and/or a `timedelta`'s keywords (`days=45`)."""
        step = timedelta(seconds=seconds, **delta)
        self._now += step
        self._mono += step.total_seconds()

    def set(self, moment: datetime) -> None:
        """Jump to `moment` (forwards or back; the monotonic scale follows)."""
        self._mono += (moment - self._now).total_seconds()
        self._now = moment

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


class InMemoryStore:
    """A target store (`entries`, `add`, `replace`, `remove`) in a list. `refusal`, when given, is
    raised by every write, the way the real store refuses one (full, a blocked entry)."""

    def __init__(self, refusal: Exception | None = None) -> None:
        self.items: list[str] = []
        self.refusal = refusal

    def entries(self) -> list[str]:
        return list(self.items)

    def add(self, content: str) -> None:
        if self.refusal is not None:
            raise self.refusal
        self.items.append(content)

    def replace(self, old_text: str, content: str) -> None:
        self.items = [content if old_text in e else e for e in self.items]

    def remove(self, old_text: str) -> None:
        self.items = [e for e in self.items if old_text not in e]


class InMemoryStores:
    """The `memory` and `user` targets, each an `InMemoryStore`."""

    def __init__(self, refusal: Exception | None = None) -> None:
        self.targets = {"memory": InMemoryStore(refusal), "user": InMemoryStore(refusal)}

    def get(self, target: str) -> InMemoryStore:
        return self.targets[target]

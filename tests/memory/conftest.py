"""Fakes for the memory tests: a fixed clock and ready-made stores in a temp state folder."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from arreio.engine.governance.redact import Redactor
from arreio.memory.store import MemoryLimits, MemoryStores
from arreio.memory.substores import Substores

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "memory"


class FixedClock:
    """A clock that stands still until a test moves it."""

    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 6, 27, 16, 0, 0, tzinfo=timezone.utc)
        self.ticks = 0.0

    def now(self) -> datetime:
        return self.current

    def monotonic(self) -> float:
        return self.ticks

    async def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)
        self.ticks += seconds


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / ".arreio"


@pytest.fixture
def stores(state: Path, clock: FixedClock) -> MemoryStores:
    return MemoryStores(state, MemoryLimits(), clock=clock)


@pytest.fixture
def substores(state: Path, clock: FixedClock) -> Substores:
    return Substores(state, clock=clock, redactor=Redactor())

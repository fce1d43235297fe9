"""Fakes for the memory tests: a fixed clock and ready-made stores in a temp state folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from arreio.engine.providers.testing import FixedClock
from arreio.engine.walls.redact import Redactor
from arreio.memory.store import MemoryLimits, MemoryStores
from arreio.memory.substores import Substores

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "memory"


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

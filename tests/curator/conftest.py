"""Fixtures for the curator tests (fakes live in curator_fakes.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from curator_fakes import clock_at

from arreio.engine.providers.testing import FixedClock


@pytest.fixture
def clock() -> FixedClock:
    return clock_at()


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    path = tmp_path / ".arreio" / "skills"
    path.mkdir(parents=True)
    return path

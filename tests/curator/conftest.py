"""Fixtures for the curator tests (fakes live in curator_fakes.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from curator_fakes import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    path = tmp_path / ".arreio" / "skills"
    path.mkdir(parents=True)
    return path

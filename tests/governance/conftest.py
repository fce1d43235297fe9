from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import goal_folder


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working directory holding a goal; HOME isolated; no ARREIO_* settings leak in."""
    return goal_folder(tmp_path, monkeypatch, "# Governed run\n\nDo the scripted work.\n")

"""The chat tests' working folder: empty (a test file that needs files in it defines its own `work`)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder

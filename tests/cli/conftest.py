from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, isolate


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working directory holding the quickstart goal and its files; HOME isolated."""
    work = tmp_path / "work"
    (work / "fixtures").mkdir(parents=True)
    shutil.copytree(REPO / "fixtures" / "goals", work / "fixtures" / "goals")
    shutil.copytree(REPO / "fixtures" / "quickstart", work / "fixtures" / "quickstart")
    isolate(monkeypatch, tmp_path / "home", work)
    return work

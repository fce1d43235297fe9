from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import cli  # noqa: F401  (the shared CliRunner fixture)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working directory holding a goal; HOME isolated; no ARREIO_* settings leak in."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "GOAL.md").write_text("# Governed run\n\nDo the scripted work.\n")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    for var in ("ARREIO_HOME", "ARREIO_MODEL", "ARREIO_MAX_STEPS", "ARREIO_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    return folder

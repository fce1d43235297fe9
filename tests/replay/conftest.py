"""Fixtures for record/replay: a project folder factory, a CLI driver, the local wire server."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arreio.cli.app import app
from tests.conftest import REPO, isolate
from tests.providers.provider_fakes import server  # noqa: F401  (the local wire server fixture)
from tests.replay.cassette_helpers import Result


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    """`project(name)`: a fresh working folder holding the quickstart goal and files, a README and a
    tiny goal `G.md`, with fast retries; the process moves into it. Same content every time, so a
    recording made in one replays in another."""
    isolate(monkeypatch, tmp_path / "home")

    def make(name: str) -> Path:
        work = tmp_path / name
        (work / "fixtures").mkdir(parents=True)
        shutil.copytree(REPO / "fixtures" / "goals", work / "fixtures" / "goals")
        shutil.copytree(REPO / "fixtures" / "quickstart", work / "fixtures" / "quickstart")
        (work / "README.md").write_text("# Demo\n\nA tiny project.\n")
        (work / "G.md").write_text("# Look at the README\n")
        (work / ".arreio").mkdir()
        (work / ".arreio" / "config.yaml").write_text("retry:\n  base_delay_s: 0.01\n  max_delay_s: 0.05\n")
        monkeypatch.chdir(work)
        return work

    return make


@pytest.fixture
def arreio() -> Callable[..., Result]:
    """Run the real CLI in-process; returns exit code, stdout, stderr and the parsed JSON events."""
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        result = runner.invoke(app, list(args), catch_exceptions=False)
        return Result(result.exit_code, result.stdout, result.stderr)

    return invoke

"""Batch tests: suites written into a temp folder, `arreio batch` run as a real process there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ARREIO, REPO

SAMPLE = REPO / "fixtures" / "batch" / "sample"
FIX_ADD = SAMPLE / "tasks" / "fix-add"
ADD_GATE = "python3 -c 'import calc; assert calc.add(2, 3) == 5'"


def fix_add_task(task_id: str, **extra: object) -> dict:
    """A task that passes: the sample's fix-add, scripted."""
    return {
        "id": task_id,
        "goal": "Make add() in calc.py add.",
        "workdir": "tasks/fix-add",
        "gates": [{"kind": "command", "command": ADD_GATE}],
        "script": "tasks/fix-add/replies.yaml",
        **extra,
    }


class Project:
    """A folder holding a suite (`suite.yaml`, the sample's tasks) and the driver's `.arreio/`."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root, self.env = root, env
        shutil.copytree(SAMPLE / "tasks", root / "tasks")

    def suite(self, tasks: list[dict], defaults: dict | None = None, name: str = "suite.yaml") -> Path:
        path = self.root / name
        path.write_text(json.dumps({"version": 1, "defaults": defaults or {"timeout_s": 60}, "tasks": tasks}, indent=1))
        return path

    def script(self, name: str, replies: list[dict]) -> str:
        path = self.root / "tasks" / name
        path.write_text(json.dumps(replies))
        return f"tasks/{name}"

    def argv(self, *args: str) -> list[str]:
        return [*ARREIO, "batch", *args]

    def batch(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.argv(*args),
            check=False,
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def batches(self) -> list[Path]:
        return sorted((self.root / ".arreio" / "batches").iterdir())

    def rows(self, batch: Path | None = None) -> list[dict]:
        batch = batch or self.batches()[-1]
        return [json.loads(line) for line in (batch / "results.jsonl").read_text().splitlines()]

    def summary(self, batch: Path | None = None) -> dict:
        return json.loads(((batch or self.batches()[-1]) / "summary.json").read_text())


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path)


def make_project(tmp_path: Path) -> Project:
    """A project folder under `tmp_path` with an isolated HOME and no ARREIO_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARREIO_")}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"), PYTHONUNBUFFERED="1")
    root = tmp_path / "project"
    root.mkdir()
    return Project(root, env)

"""Checkpoint tests: real files, real git, scripted runs through the real CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import goal_folder


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working directory holding a goal; HOME isolated; the test runs in it."""
    return goal_folder(tmp_path, monkeypatch, "# Checkpointed run\n\nDo the scripted work.\n")


def events_of(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def scripted(invoke, work: Path, script: str, *extra: str):
    """Run `script` (YAML replies) through `arreio run --json --yes`; returns (result, events, report)."""
    (work / "s.yaml").write_text(script)
    result = invoke("run", "--goal", "GOAL.md", "--script", "s.yaml", "--json", "--yes", *extra)
    events = events_of(result.stdout)
    report = (
        json.loads((work / events[-1]["report_path"]).read_text()) if events and events[-1].get("report_path") else {}
    )
    return result, events, report


def tree_state(root: Path, skip: tuple[str, ...] = (".arreio", "s.yaml")) -> dict[str, tuple[bytes, int]]:
    """Every file under `root` (outside `skip`): its bytes and permission bits — what undo must restore."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        dirnames[:] = [d for d in dirnames if (rel_dir / d).as_posix() not in skip and d != ".git"]
        for name in filenames:
            rel = (rel_dir / name).as_posix()
            if rel in skip:
                continue
            path = Path(dirpath) / name
            out[rel] = (
                os.readlink(path).encode() if path.is_symlink() else path.read_bytes(),
                path.lstat().st_mode & 0o777,
            )
    return out

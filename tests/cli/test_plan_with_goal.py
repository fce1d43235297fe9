"""`arreio run --goal GOAL.md --plan PLAN`: the goal says what the whole plan is for, and each unit does
what its own goal says (the goal sent with unit one had unit one write what unit two was for, and
unit two, finding the file there, only listed the folder)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import REPO, run_cli


def test_each_unit_does_its_own_part_when_the_plan_comes_with_its_goal(tmp_path: Path, arreio_env: dict) -> None:
    for folder in ("goals", "plans", "quickstart"):
        shutil.copytree(REPO / "fixtures" / folder, tmp_path / "fixtures" / folder)
    done = run_cli(
        tmp_path,
        arreio_env,
        "run",
        "--goal",
        "fixtures/goals/quickstart.md",
        "--plan",
        "fixtures/plans/quickstart.plan.yaml",
        "--offline",
        "--yes",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    calls: dict[str, list[str]] = {}
    unit = None
    for event in map(json.loads, done.stdout.splitlines()):
        if event["type"] == "unit_start":
            unit = event["unit_id"]
        elif event["type"] == "tool_start" and event["agent"] is None:
            calls.setdefault(unit, []).append(event["name"])
    assert "read_file" in calls["gather"] and "write_file" not in calls["gather"]
    assert "write_file" in calls["write"]
    summary = (tmp_path / "build" / "quickstart-summary.md").read_text()
    assert summary.startswith("# Summary: Quickstart: summarise the project notes\n")  # titled from the goal
    assert "## fixtures/quickstart/notes.md" in summary and "## fixtures/quickstart/todo.md" in summary

"""The offline model's answer says what the run it ends did: a session resumed with a new instruction
does not claim the earlier run's work again. Regression: after "append a line to notes.md", a
resumed "summarise app.py into app-summary.md" answered "I updated notes.md" too, for a run that
only wrote the summary (its end line said one file created). Real runs through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def run(work: Path, env: dict[str, str], *args: str) -> dict:
    done = run_cli(work, env, "run", "--offline", "--json", *args)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    return {**events[-1], "session_id": events[0]["session_id"]}  # done, and run_start's session


def test_a_resumed_session_answers_for_its_own_run(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("# Notes\n\nfirst\n")
    (work / "app.py").write_text("def main():\n    pass\n")
    first = run(work, arreio_env, "Append a line to notes.md saying hello")
    assert "I updated notes.md" in first["final_text"]
    appended = (work / "notes.md").read_text()
    second = run(work, arreio_env, "--resume", first["session_id"], "Now summarise app.py into app-summary.md")
    assert "I wrote app-summary.md" in second["final_text"]
    assert "notes.md" not in second["final_text"]  # neither updated again nor read in this run
    assert (work / "notes.md").read_text() == appended and (work / "app-summary.md").is_file()
    assert second["changes"]["created"] == ["app-summary.md"] and second["changes"]["modified"] == []

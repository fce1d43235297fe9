"""A `git` the agent wrote (`.venv/bin/git`, on PATH with the project's virtualenv activated) is never
what arreio runs on the host: not by the checkpoints of a run, nor by `arreio diff` / `undo` /
`doctor` afterwards. Real git, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

PLANTED = '#!/bin/sh\ntouch {marker}\nexec /usr/bin/git "$@"\n'


def test_a_planted_git_never_runs(tmp_path: Path, arreio_env: dict) -> None:
    work = tmp_path / "work"
    venv_bin = work / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    marker = tmp_path / "PLANTED-GIT-RAN"
    (venv_bin / "git").write_text(PLANTED.format(marker=marker))
    (venv_bin / "git").chmod(0o755)
    (work / "notes.md").write_text("before\n")
    script = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "after\n"}}]},
        {"text": "I rewrote notes.md."},
    ]
    (work / "script.json").write_text(json.dumps(script))
    env = {**arreio_env, "PATH": f"{venv_bin}:/usr/bin:/bin", "VIRTUAL_ENV": str(work / ".venv")}
    ran = run_cli(work, env, "run", "Rewrite notes.md", "--script", "script.json", "--json")
    assert ran.returncode == 0, ran.stderr
    assert (work / "notes.md").read_text() == "after\n"
    assert "notes.md" in run_cli(work, env, "diff").stdout
    undone = run_cli(work, env, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (work / "notes.md").read_text() == "before\n"  # the real git did the work
    run_cli(work, env, "doctor")
    assert not marker.exists()

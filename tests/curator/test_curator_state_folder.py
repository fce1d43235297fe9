"""The curator commands and the state folder: `curator status` and `curator run
--dry-run` made `.arreio/skills/.usage.json.lock` — a state folder without its `.gitignore`, after
which no run added one and `git add -A` took sessions, the audit journal and checkpoints into the
user's next commit. Real CLI, real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import cli_env, run_cli


def arreio(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(cwd, cli_env(cwd.parent / "home"), *args, timeout=60)


def repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    (work / "notes.md").write_text("hello\n")
    return work


def test_curator_status_and_a_dry_run_make_nothing(tmp_path: Path) -> None:
    work = repo(tmp_path)
    for args in (["curator", "status"], ["curator", "run", "--dry-run"]):
        done = arreio(work, *args)
        assert done.returncode == 0, done.stderr
        assert not (work / ".arreio").exists(), args


def test_a_state_folder_the_curator_makes_keeps_itself_and_later_runs_out_of_git(tmp_path: Path) -> None:
    work = repo(tmp_path)
    assert arreio(work, "curator", "run").returncode == 0
    assert (work / ".arreio" / ".gitignore").is_file()
    assert arreio(work, "run", "Summarise notes.md into summary.md", "--offline").returncode == 0
    subprocess.run(["git", "add", "-A"], cwd=work, check=True)
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=work, capture_output=True, text=True, check=True
    ).stdout.split()
    assert sorted(staged) == ["notes.md", "summary.md"]

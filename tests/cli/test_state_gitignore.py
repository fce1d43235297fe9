"""The state folder arreio makes keeps itself out of the user's git: a `.gitignore` holding `*` is
written with it, so `git status` stays clean and `git add -A` does not take sessions, runs and the
audit journal (the project's files as the model read them) into the next commit. A folder that
exists is never touched. Real subprocesses in real git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from arreio.engine.core.paths import STATE_GITIGNORE, make_state_dir
from tests.conftest import run_cli as arreio


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one committed file and a clean status."""
    work = tmp_path / "repo"
    work.mkdir()
    git(work, "init", "-q")
    git(work, "config", "user.email", "t@example.invalid")
    git(work, "config", "user.name", "t")
    (work / "notes.md").write_text("# Notes\n\nThe deploy script lives in tools/deploy.sh.\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "init")
    return work


def test_a_folder_made_gets_the_ignore_file(tmp_path: Path) -> None:
    home = tmp_path / "a" / "b" / ".arreio"
    assert make_state_dir(home) is True
    assert (home / ".gitignore").read_text() == STATE_GITIGNORE
    assert STATE_GITIGNORE.splitlines()[-1] == "*"


def test_an_existing_folder_is_left_as_it_is(tmp_path: Path) -> None:
    home = tmp_path / ".arreio"
    home.mkdir()
    assert make_state_dir(home) is False
    assert list(home.iterdir()) == []  # no ignore file added to a folder the user already has
    (home / ".gitignore").write_text("!config.yaml\n")
    assert make_state_dir(home) is False
    assert (home / ".gitignore").read_text() == "!config.yaml\n"  # the user's edit stays


def test_a_file_in_its_place_is_an_error(tmp_path: Path) -> None:
    (tmp_path / ".arreio").write_text("not a folder")
    with pytest.raises(OSError):
        make_state_dir(tmp_path / ".arreio")
    assert (tmp_path / ".arreio").read_text() == "not a folder"


@pytest.mark.parametrize(
    ("command", "extra_env"),
    [
        (("run", "--offline", "read notes.md and say where the deploy script lives"), {}),
        (("kb", "add", "notes.md"), {"ARREIO_KB_EMBEDDER": "none"}),
        (("memory", "add", "the deploy script lives in tools/deploy.sh"), {}),
        (("config", "set", "max_steps", "12"), {}),
    ],
    ids=["run", "kb-add", "memory-add", "config-set"],
)
def test_the_first_command_leaves_git_status_clean(
    repo: Path, arreio_env: dict[str, str], command: tuple[str, ...], extra_env: dict[str, str]
) -> None:
    done = arreio(repo, {**arreio_env, **extra_env}, *command)
    assert done.returncode == 0, done.stderr
    assert (repo / ".arreio").is_dir() and len(list((repo / ".arreio").iterdir())) >= 2  # it wrote its state
    assert git(repo, "status", "--porcelain") == ""
    git(repo, "add", "-A")
    assert git(repo, "diff", "--cached", "--name-only") == ""  # `git add -A` takes none of it


def test_a_state_folder_the_user_had_stays_visible(repo: Path, arreio_env: dict[str, str]) -> None:
    (repo / ".arreio").mkdir()
    done = arreio(repo, arreio_env, "run", "--offline", "read notes.md")
    assert done.returncode == 0, done.stderr
    assert not (repo / ".arreio" / ".gitignore").exists()
    assert git(repo, "status", "--porcelain").strip() == "?? .arreio/"


def test_the_ignored_folder_is_still_read(repo: Path, arreio_env: dict[str, str]) -> None:
    """Ignored by git is not ignored by arreio: the project config written there is the one used."""
    assert arreio(repo, arreio_env, "config", "set", "max_steps", "3").returncode == 0
    shown = arreio(repo, arreio_env, "config", "get", "max_steps")
    assert shown.returncode == 0 and shown.stdout.strip() == "3"

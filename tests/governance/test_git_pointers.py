"""What a repository's config makes git run or read from the working tree is protected like `.git`:
the file tools refuse it; real git confirms each pointer is one git follows."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from arreio.engine.walls.git_pointers import pointed_paths
from arreio.engine.walls.protected import write_refusal


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"},
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    _git("init", "-q", cwd=work)
    return work


def test_hooks_path_includes_commands_and_linked_hooks_are_found(repo: Path) -> None:
    (repo / ".husky").mkdir()
    (repo / "tools").mkdir()
    (repo / "githooks").mkdir()
    _git("config", "core.hooksPath", ".husky", cwd=repo)
    _git("config", "include.path", "../shared.gitconfig", cwd=repo)
    (repo / "shared.gitconfig").write_text('[diff "img"]\n\ttextconv = ./tools/conv.sh --flag ; a comment\n')
    _git("config", "alias.up", "!./tools/up.sh", cwd=repo)
    _git("config", "includeIf.gitdir:~/.path", "nested/more.gitconfig", cwd=repo)
    hooks = repo / ".git" / "hooks"
    for item in hooks.iterdir():
        item.unlink()
    hooks.rmdir()
    hooks.symlink_to(repo / "githooks")
    found = {p.relative_to(repo).as_posix() for p in pointed_paths(repo / ".git", repo)}
    assert {".husky", "shared.gitconfig", "tools/conv.sh", "tools/up.sh", "githooks"} <= found
    for name in (".husky/pre-commit", "shared.gitconfig", "tools/conv.sh", "githooks/pre-commit"):
        refused = write_refusal("write_file", (repo / name).resolve(), repo, {"HOME": str(repo.parent / "home")}, [])
        assert refused is not None and "version control" in refused, name
    assert write_refusal("write_file", (repo / "src" / "app.py").resolve(), repo, {"HOME": "/nowhere"}, []) is None


def test_a_pointer_out_of_the_tree_or_a_plain_value_is_no_path_in_it(repo: Path) -> None:
    _git("config", "core.pager", "less -R", cwd=repo)
    _git("config", "core.hooksPath", "/etc/githooks", cwd=repo)
    assert pointed_paths(repo / ".git", repo) == []


def test_a_nested_state_folder_is_refused_to_the_file_tools(repo: Path) -> None:
    target = (repo / "sub" / ".arreio" / "config.yaml").resolve()
    refused = write_refusal("write_file", target, repo, {"HOME": "/nowhere"}, [])
    assert refused is not None and "sub/.arreio/" in refused

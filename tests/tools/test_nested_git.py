"""A nested repository's `.git` in the shell's sandbox: the file tools refused it, but
`shell` could write it — `git -C nested config core.fsmonitor …` planted a command the user's next
`git status` there runs, and `rm -rf nested/.git` took its history. Real bubblewrap, real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

from arreio.engine.tools.nested_git import find_nested_git
from tests.tools.test_sandbox import requires_sandbox, shell


def _repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_every_nested_git_is_found_and_only_those(tmp_path: Path) -> None:
    _repo(tmp_path)  # the working directory's own .git is the sandbox's anyway: not listed twice
    _repo(tmp_path / "vendor" / "lib")
    _repo(tmp_path / "vendor" / "lib" / "deeper")  # a repository inside a nested one
    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / ".git").write_text("gitdir: ../.git/modules/mod\n")  # a submodule's .git is a file
    _repo(tmp_path / "node_modules" / "pkg")  # installed packages are not checkouts the user keeps
    (tmp_path / "link").symlink_to(tmp_path / "vendor")  # a link is not walked into (no second listing)
    found = find_nested_git(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in found) == [
        "mod/.git",
        "vendor/lib/.git",
        "vendor/lib/deeper/.git",
    ]
    assert find_nested_git(tmp_path, max_entries=1) == []  # a bounded walk: a huge tree costs a bounded time


@requires_sandbox
def test_shell_cannot_write_or_remove_a_nested_repository_s_git(root: Path) -> None:
    nested = _repo(root / "nested")
    before = (nested / ".git" / "config").read_bytes()
    result = shell(
        root,
        "git -C nested config core.fsmonitor 'touch planted'; echo '#x' >> nested/.git/config; "
        "rm -rf nested/.git; echo finished",
    )
    assert "finished" in result.content and "Read-only file system" in result.content
    assert (nested / ".git" / "config").read_bytes() == before
    assert (nested / ".git" / "HEAD").is_file()
    plain = shell(root, "echo ok > nested/file.txt && cat nested/file.txt")  # the checkout itself is writable
    assert plain.content == "ok\nexit code: 0"

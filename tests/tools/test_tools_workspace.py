"""Confinement: every path a tool gets stays inside the working directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arreio.engine.core.atomic import write_atomic as atomic_write
from arreio.engine.tools.base import ToolError
from arreio.engine.tools.workspace import resolve_in_root


def test_relative_path_resolves_inside(root: Path) -> None:
    assert resolve_in_root(root, "src/a.py") == root.resolve() / "src" / "a.py"


def test_dot_and_empty_are_the_root(root: Path) -> None:
    assert resolve_in_root(root, ".") == root.resolve()
    assert resolve_in_root(root, "") == root.resolve()


def test_dotdot_escape_refused(root: Path) -> None:
    with pytest.raises(ToolError, match=r"path \.\./secret is outside the working directory"):
        resolve_in_root(root, "../secret")


def test_dotdot_that_comes_back_inside_is_fine(root: Path) -> None:
    assert resolve_in_root(root, f"sub/../../{root.name}/x") == root.resolve() / "x"


def test_absolute_outside_refused(root: Path) -> None:
    with pytest.raises(ToolError, match="outside the working directory"):
        resolve_in_root(root, "/etc/passwd")


def test_absolute_inside_accepted(root: Path) -> None:
    inside = root / "notes.txt"
    assert resolve_in_root(root, str(inside)) == inside.resolve()


def test_symlink_pointing_outside_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    (root / "link").symlink_to(outside)
    with pytest.raises(ToolError, match="path link is outside the working directory"):
        resolve_in_root(root, "link")


def test_symlinked_dir_pointing_outside_refused_for_children(root: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (root / "d").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(ToolError, match="outside"):
        resolve_in_root(root, "d/new.txt")


def test_home_tilde_refused(root: Path) -> None:
    with pytest.raises(ToolError, match="outside"):
        resolve_in_root(root, "~/.ssh/id_rsa")


def test_nul_byte_is_a_tool_error(root: Path) -> None:
    with pytest.raises(ToolError):
        resolve_in_root(root, "a\0b")


def test_file_tools_refuse_escape_through_the_chain(call, root: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret")
    for name, args in [
        ("read_file", {"path": "../outside.txt"}),
        ("write_file", {"path": "../outside.txt", "content": "x"}),
        ("edit_file", {"path": str(tmp_path / "outside.txt"), "old": "secret", "new": "x"}),
        ("list_dir", {"path": ".."}),
        ("grep", {"pattern": "secret", "path": ".."}),
    ]:
        result = call(name, **args)
        assert result.is_error, name
        assert "outside the working directory" in result.content, name
    assert (tmp_path / "outside.txt").read_text() == "secret"


def test_atomic_write_keeps_mode_and_leaves_no_temp(root: Path) -> None:
    target = root / "run.sh"
    target.write_text("old")
    os.chmod(target, 0o755)
    atomic_write(target, b"new")
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in root.iterdir()] == ["run.sh"]

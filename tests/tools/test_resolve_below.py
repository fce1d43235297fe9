"""`paths.resolve_below` walks only the path's own components below an already-resolved base (issue
23), and must give what `Path.resolve` gives for every shape of path: symlinks (to files, folders,
outside, in loops), `..` through links and missing folders, absolute paths, `~`-free oddities."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arreio.engine.core.paths import resolve_below
from arreio.engine.tools.base import ToolError
from arreio.engine.tools.workspace import resolve_in_root

SHAPES = [
    "a.txt",
    "src/a.py",
    "src//a.py",
    "./src/./a.py",
    "src/",
    ".",
    "",
    "..",
    "../x",
    "src/../a.txt",
    "missing/x/y",
    "missing/../a.txt",
    "missing/../../x",
    "a.txt/inside",
    "link-dir/b.txt",
    "link-dir/../a.txt",
    "link-file",
    "link-out/f",
    "link-out/../..",
    "loop/x",
    "src/link-up/src/a.py",
    "dangling/x",
    "deep/er/est/../../z",
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    base = (tmp_path / "work").resolve()
    (base / "src" / "sub").mkdir(parents=True)
    (base / "deep" / "er" / "est").mkdir(parents=True)
    (base / "a.txt").write_text("a")
    (base / "src" / "a.py").write_text("p")
    (base / "src" / "sub" / "b.txt").write_text("b")
    (tmp_path / "outside").mkdir()
    os.symlink(base / "src" / "sub", base / "link-dir")
    os.symlink("a.txt", base / "link-file")
    os.symlink(tmp_path / "outside", base / "link-out")
    os.symlink("loop", base / "loop")
    os.symlink("..", base / "src" / "link-up")
    os.symlink(base / "nowhere", base / "dangling")
    return base


@pytest.mark.parametrize("shape", SHAPES)
def test_the_same_as_path_resolve(tree: Path, shape: str) -> None:
    try:
        expected: object = Path(tree, shape).resolve()
    except RuntimeError as error:  # a symlink loop
        expected = type(error)
    try:
        got: object = resolve_below(tree, shape)
    except RuntimeError as error:
        got = type(error)
    assert got == expected


def test_absolute_paths_resolve_whole(tree: Path) -> None:
    assert resolve_below(tree, str(tree / "link-dir" / "b.txt")) == tree / "src" / "sub" / "b.txt"
    assert resolve_below(tree, "/") == Path("/")


def test_confinement_holds_through_links_and_dotdot(tree: Path) -> None:
    assert resolve_in_root(tree, "link-dir/b.txt", root_resolved=True) == tree / "src" / "sub" / "b.txt"
    for escape in ("link-out/f", "../x", "missing/../../x", "src/link-up/../x"):
        with pytest.raises(ToolError, match="outside the working directory"):
            resolve_in_root(tree, escape, root_resolved=True)


def test_a_nul_byte_is_refused_as_before(tree: Path) -> None:
    with pytest.raises(ToolError, match="cannot be used"):
        resolve_in_root(tree, "a\0b", root_resolved=True)

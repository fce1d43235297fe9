"""grep over a real tree: globs, skipped folders, binary files, caps, bad patterns."""

from __future__ import annotations

from pathlib import Path

from arreio.engine.core.config import Settings
from arreio.engine.tools.run_context import RunContext


def make_tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("import os\ndef main():\n    return TODO\n")
    (root / "src" / "web.ts").write_text("// TODO: types\n")
    (root / "README.md").write_text("# TODO list\n")
    for skipped in (".git", ".arreio", "node_modules", "__pycache__", ".venv"):
        (root / skipped).mkdir()
        (root / skipped / "x.py").write_text("TODO hidden\n")
    (root / "blob.bin").write_bytes(b"TODO\0\0binary")


def test_grep_finds_lines_with_path_and_number(call, root: Path) -> None:
    make_tree(root)
    result = call("grep", pattern="TODO")
    assert not result.is_error
    assert result.content.splitlines() == [
        "README.md:1: # TODO list",
        "src/app.py:3:     return TODO",
        "src/web.ts:1: // TODO: types",
    ]


def test_grep_glob_filters_by_name(call, root: Path) -> None:
    make_tree(root)
    assert call("grep", pattern="TODO", glob="*.py").content == "src/app.py:3:     return TODO"
    both = call("grep", pattern="TODO", glob="*.{py,ts}").content.splitlines()
    assert [line.split(":")[0] for line in both] == ["src/app.py", "src/web.ts"]
    assert call("grep", pattern="TODO", glob="src/*.ts").content == "src/web.ts:1: // TODO: types"


def test_grep_path_limits_search(call, root: Path) -> None:
    make_tree(root)
    assert call("grep", pattern="TODO", path="src/web.ts").content == "src/web.ts:1: // TODO: types"
    assert len(call("grep", pattern="TODO", path="src").content.splitlines()) == 2


def test_grep_no_matches_is_not_an_error(call, root: Path) -> None:
    make_tree(root)
    result = call("grep", pattern="nothing-here")
    assert not result.is_error and "no matches" in result.content


def test_grep_caps_matches_and_reports_total(call, root: Path) -> None:
    (root / "many.txt").write_text("hit\n" * 250)
    (root / "more.txt").write_text("hit\n" * 10)
    result = call("grep", pattern="hit")
    lines = result.content.splitlines()
    assert len(lines) == 201
    assert lines[-1] == "[showing 200 of 260 matches in 2 files; narrow the pattern, path or glob]"


def test_grep_cap_from_settings(call, root: Path) -> None:
    (root / "many.txt").write_text("hit\n" * 20)
    result = call("grep", RunContext(cwd=root, settings=Settings(tools={"grep_max_matches": 5})), pattern="hit")
    assert result.content.splitlines()[-1].startswith("[showing 5 of 20 matches")


def test_grep_invalid_regex(call) -> None:
    result = call("grep", pattern="foo(")
    assert result.is_error
    assert "invalid regular expression 'foo('" in result.content


def test_grep_skips_symlinks_leading_outside(call, root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("password=hunter2\n")
    (root / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (root / "inside.txt").write_text("password=ok\n")
    result = call("grep", pattern="password")
    assert result.content == "inside.txt:1: password=ok"


def test_a_file_grep_did_not_search_is_said_not_read_as_no_match(call, root: Path) -> None:
    """Regression: a 10 MB log and a binary file named on its own both answered "no matches", while
    read_file showed the line: the model took a skip for absence."""
    from arreio.engine.tools.search import MAX_FILE_BYTES

    with open(root / "big.log", "w") as handle:
        handle.write("ERROR here\n")
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no 10 MB written
    (root / "small.log").write_text("all quiet\n")
    (root / "bin.dat").write_bytes(b"ERROR\0\0\x89")
    named = call("grep", pattern="ERROR", path="big.log")
    assert not named.is_error and named.content == (
        "no matches for /ERROR/ in big.log\n[not searched, larger than 10 MB: big.log; read_file pages through one]"
    )
    folder = call("grep", pattern="quiet")
    assert folder.content == (
        "small.log:1: all quiet\n[not searched, larger than 10 MB: big.log; read_file pages through one]"
    )
    binary = call("grep", pattern="ERROR", path="bin.dat")
    assert binary.is_error and "bin.dat is a binary file; grep searches text files" in binary.content
    assert call("grep", pattern="ERROR", glob="*.dat").content == "no matches for /ERROR/ in . (glob *.dat)"

"""read_file, write_file, edit_file, list_dir through the real chain on real files."""

from __future__ import annotations

from pathlib import Path

from arreio.engine.core.config import Settings
from arreio.engine.tools.run_context import RunContext


def write_lines(path: Path, count: int) -> None:
    path.write_text("".join(f"line {i}\n" for i in range(1, count + 1)))


# ── read_file ──────────────────────────────────────────────────────────────────


def test_read_whole_file_numbered_without_note(call, root: Path) -> None:
    (root / "a.txt").write_text("alpha\nbeta\n")
    result = call("read_file", path="a.txt")
    assert not result.is_error
    assert result.content == "     1\talpha\n     2\tbeta"


def test_read_offset_and_limit_with_note(call, root: Path) -> None:
    write_lines(root / "big.txt", 50)
    result = call("read_file", path="big.txt", offset=10, limit=5)
    lines = result.content.splitlines()
    assert lines[0] == "    10\tline 10"
    assert lines[4] == "    14\tline 14"
    assert lines[5] == "[showing lines 10–14 of 50; use offset=15 to read on]"


def test_read_tail_of_file_note_without_read_on(call, root: Path) -> None:
    write_lines(root / "big.txt", 50)
    result = call("read_file", path="big.txt", offset="48")  # coerced from a string
    assert result.content.splitlines()[-1] == "[showing lines 48–50 of 50]"


def test_read_default_limit_from_settings(root: Path, call) -> None:
    write_lines(root / "big.txt", 30)
    ctx = RunContext(cwd=root, settings=Settings(tools={"read_limit_lines": 10}))
    result = call("read_file", ctx, path="big.txt")
    assert result.content.count("\n") == 10  # 10 lines + the note
    assert "[showing lines 1–10 of 30; use offset=11 to read on]" in result.content


def test_read_offset_past_end(call, root: Path) -> None:
    write_lines(root / "a.txt", 3)
    result = call("read_file", path="a.txt", offset=9)
    assert result.is_error and "past the end" in result.content and "3 lines" in result.content


def test_read_long_line_is_cut_with_marker(call, root: Path) -> None:
    (root / "min.js").write_text("x" * 5000 + "\n")
    result = call("read_file", path="min.js")
    assert "[… line cut, 5000 chars in all]" in result.content
    assert len(result.content) < 2100


def test_read_binary_refused(call, root: Path) -> None:
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    result = call("read_file", path="img.png")
    assert result.is_error and "binary file" in result.content


def test_read_missing_suggests_list_dir(call) -> None:
    result = call("read_file", path="nope.txt")
    assert result.is_error
    assert "file not found: nope.txt" in result.content and "list_dir" in result.content


def test_read_directory_refused(call, root: Path) -> None:
    (root / "src").mkdir()
    result = call("read_file", path="src")
    assert result.is_error and "is a directory" in result.content


def test_read_empty_file(call, root: Path) -> None:
    (root / "empty").write_text("")
    result = call("read_file", path="empty")
    assert not result.is_error and "empty" in result.content


# ── write_file ─────────────────────────────────────────────────────────────────


def test_write_creates_parents_and_reports(call, root: Path) -> None:
    result = call("write_file", path="deep/er/new.txt", content="one\ntwo\n")
    assert not result.is_error
    assert result.content == "created deep/er/new.txt (8 bytes, 2 lines)"
    assert (root / "deep/er/new.txt").read_text() == "one\ntwo\n"


def test_write_overwrites_atomically_leaving_no_temp(call, root: Path) -> None:
    (root / "f.txt").write_text("old content")
    result = call("write_file", path="f.txt", content="né")
    assert result.content == "overwrote f.txt (3 bytes, 1 line)"
    assert (root / "f.txt").read_text(encoding="utf-8") == "né"
    assert sorted(p.name for p in root.iterdir()) == ["f.txt"]


def test_write_new_file_is_not_private(call, root: Path) -> None:
    call("write_file", path="f.txt", content="x")
    # mkstemp makes 0600 files; a created file must look like any other new file
    assert (root / "f.txt").stat().st_mode & 0o044


def test_write_onto_directory_refused(call, root: Path) -> None:
    (root / "d").mkdir()
    result = call("write_file", path="d", content="x")
    assert result.is_error and "is a directory" in result.content


def test_write_under_a_file_refused(call, root: Path) -> None:
    (root / "f").write_text("x")
    result = call("write_file", path="f/child.txt", content="x")
    assert result.is_error and "a parent of it, f, is a file" in result.content


# ── edit_file ──────────────────────────────────────────────────────────────────


def test_edit_unique_match(call, root: Path) -> None:
    (root / "m.py").write_text("def a():\n    return 1\n\ndef b():\n    return 2\n")
    result = call("edit_file", path="m.py", old="    return 2\n", new="    x = 2\n    return x\n")
    assert not result.is_error
    assert (root / "m.py").read_text() == "def a():\n    return 1\n\ndef b():\n    x = 2\n    return x\n"
    assert "changed range now lines 5–6" in result.content
    assert "     6\t    return x" in result.content
    assert sorted(p.name for p in root.iterdir()) == ["m.py"]


def test_edit_zero_matches(call, root: Path) -> None:
    (root / "m.py").write_text("alpha\n")
    result = call("edit_file", path="m.py", old="gamma", new="delta")
    assert result.is_error and "old was not found in m.py" in result.content
    assert (root / "m.py").read_text() == "alpha\n"


def test_edit_zero_matches_hints_whitespace(call, root: Path) -> None:
    (root / "m.py").write_text("x = 1\nif x:\n\tprint(x)\n")
    result = call("edit_file", path="m.py", old="if x:\n    print(x)", new="pass")
    assert result.is_error
    assert "up to whitespace is at line(s) 2" in result.content


def test_edit_zero_matches_hints_line_numbers(call, root: Path) -> None:
    (root / "m.py").write_text("alpha\nbeta\n")
    result = call("edit_file", path="m.py", old="     2\tbetta", new="b")
    assert result.is_error and "line numbers" in result.content


def test_edit_multiple_matches_gives_count_and_lines(call, root: Path) -> None:
    (root / "m.py").write_text("x = 1\ny = 2\nx = 1\nz\nx = 1\n")
    result = call("edit_file", path="m.py", old="x = 1", new="x = 3")
    assert result.is_error
    assert "old occurs 3 times in m.py (at lines 1, 3, 5)" in result.content
    assert "more surrounding lines" in result.content
    assert (root / "m.py").read_text() == "x = 1\ny = 2\nx = 1\nz\nx = 1\n"


def test_edit_keeps_crlf_line_endings(call, root: Path) -> None:
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = call("edit_file", path="w.txt", old="two\nthree", new="2\n3")
    assert not result.is_error, result.content
    assert (root / "w.txt").read_bytes() == b"one\r\n2\r\n3\r\n"


def test_edit_identical_old_new_refused(call, root: Path) -> None:
    (root / "m.py").write_text("a\n")
    result = call("edit_file", path="m.py", old="a", new="a")
    assert result.is_error and "identical" in result.content


def test_edit_missing_file(call) -> None:
    result = call("edit_file", path="no.py", old="a", new="b")
    assert result.is_error and "file not found" in result.content


# ── list_dir ───────────────────────────────────────────────────────────────────


def test_list_dir_sorted_with_sizes_and_dirs(call, root: Path) -> None:
    (root / "b.txt").write_text("12345")
    (root / "a").mkdir()
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref")
    (root / ".arreio").mkdir()
    (root / "big.bin").write_bytes(b"\0" * 2048)
    result = call("list_dir")
    assert not result.is_error
    assert result.content.splitlines() == [
        "./ (5 entries)",
        ".arreio/ (contents not listed)",
        ".git/ (contents not listed)",
        "a/",
        "b.txt  5 B",
        "big.bin  2.0 KB",
    ]


def test_list_dir_subdir_and_symlink(call, root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "m.py").write_text("")
    (root / "src" / "alias.py").symlink_to("m.py")
    result = call("list_dir", path="src")
    assert result.content.splitlines() == ["src/ (2 entries)", "alias.py -> m.py", "m.py  0 B"]


def test_list_dir_caps_entries(call, root: Path) -> None:
    for i in range(510):
        (root / f"f{i:04}").write_text("")
    result = call("list_dir")
    lines = result.content.splitlines()
    assert lines[0] == "./ (510 entries)"
    assert len(lines) == 1 + 500 + 1
    assert lines[-1] == "[… 10 more entries omitted]"


def test_list_dir_errors(call, root: Path) -> None:
    (root / "f.txt").write_text("")
    assert "use read_file" in call("list_dir", path="f.txt").content
    missing = call("list_dir", path="nope")
    assert missing.is_error and "no such directory: nope" in missing.content


def test_counts_read_in_the_singular_when_there_is_one(call, root: Path) -> None:
    """ "1 entries", "1 lines": one of a thing is said as one."""
    (root / "only").mkdir()
    (root / "only" / "x.txt").write_text("a")
    assert call("list_dir", path="only").content.splitlines()[0] == "only/ (1 entry)"
    assert call("write_file", path="one.txt", content="x").content == "created one.txt (1 byte, 1 line)"
    assert call("write_file", path="two.txt", content="a\nb\n").content == "created two.txt (4 bytes, 2 lines)"

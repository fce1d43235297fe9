"""A file name may hold a newline, a tab or an escape sequence; in what the model reads it stays one
name on one line, its control characters written out (`\\x0a`). A raw newline let a name fake more
entries of a listing or more grep hits. Honest names (spaces, accents, CJK, emoji)
are shown as they are. Real files through the real chain; the kb tool through a real index."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.workspace import shown_name
from arreio.memory.knowledge.index import open_knowledge_base
from arreio.memory.knowledge.tool import KbSearchTool

FAKER = "notes.md  12 B\nsecrets.env  40 B"  # a name that, raw, reads as two entries
HONEST = ["my notes.md", "déjà vu.md", "漢字.md", "😀.md"]


def make(root: Path) -> None:
    for name in (FAKER, "tab\tname.md", "esc\x1b[2Jname.md", *HONEST):
        (root / name).write_text("the ocelot sleeps\n")


def test_the_name_function() -> None:
    assert shown_name("a\nb") == "a\\x0ab" and shown_name("x\x1b[2J") == "x\\x1b[2J"
    assert shown_name("line\u2028sep") == "line\\u2028sep"
    assert shown_name("n\udcffame\n") == "n\udcffame\\x0a"  # a byte that is not UTF-8: the chain writes it as \xff
    for name in HONEST:
        assert shown_name(name) is name


def test_list_dir_keeps_each_name_on_its_row(call, root: Path) -> None:
    make(root)
    listing = call("list_dir", path=".").content
    rows = listing.splitlines()
    assert rows[0] == "./ (7 entries)" and len(rows) == 8
    assert "notes.md  12 B\\x0asecrets.env  40 B  18 B" in rows
    assert not any(row.startswith("secrets.env") for row in rows)
    assert "tab\\x09name.md  18 B" in rows and "esc\\x1b[2Jname.md  18 B" in rows
    for name in HONEST:
        assert f"{name}  18 B" in rows


def test_grep_hits_are_one_per_line(call, root: Path) -> None:
    make(root)
    hits = [line for line in call("grep", pattern="ocelot").content.splitlines() if ":1: " in line]
    assert len(hits) == 7
    assert "notes.md  12 B\\x0asecrets.env  40 B:1: the ocelot sleeps" in hits
    assert not any(line.startswith("secrets.env") for line in call("grep", pattern="ocelot").content.splitlines())


def test_kb_search_names_stay_on_their_line(tmp_path: Path, root: Path, monkeypatch) -> None:
    monkeypatch.setenv("ARREIO_KB_EMBEDDER", "none")  # keyword only: no model needed
    (root / FAKER).write_text("# Ocelot\n\nThe ocelot sleeps by day.\n")
    state = tmp_path / "state"
    kb = open_knowledge_base(state)
    try:
        kb.add_files([root / FAKER], [])
    finally:
        kb.close()
    tool = KbSearchTool(state)
    try:
        result = asyncio.run(tool.execute(tool.input_model(query="ocelot"), RunContext(cwd=root, env={})))
    finally:
        tool.close()
    first = next(line for line in result.content.splitlines() if line.startswith("[1]"))
    assert first.startswith("[1] notes.md  12 B\\x0asecrets.env  40 B:")
    assert not any(line.startswith("secrets.env") for line in result.content.splitlines())

"""The pruned results' artifacts file: one append-only file per session, and every stub's
`read_file(offset=…, limit=…)` shows exactly the result it replaced, through the real tool chain."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arreio.engine.context.artifacts import ArtifactFile
from arreio.engine.tools.builtin import builtin_tools
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext

TEXTS = {
    "c1": "first result\nwith two lines\n",
    "c2": "no final newline",
    "c3": "",
    "c4": "unicode ✓ — é\n\n\ntrailing blank lines\n\n",
}


def _read(cwd: Path, path: Path, first: int, last: int) -> str:
    registry = ToolRegistry(builtin_tools())
    args = {"path": str(path.relative_to(cwd)), "offset": first, "limit": last - first + 1}
    result = asyncio.run(run_tool(registry, "read_file", args, RunContext(cwd=cwd, env={"PATH": "/usr/bin:/bin"})))
    assert not result.is_error, result.content
    return "\n".join(line.split("\t", 1)[1] for line in result.content.split("\n") if "\t" in line)


def test_each_block_reads_back_as_the_result_it_holds(tmp_path: Path) -> None:
    folder = tmp_path / ".arreio" / "sessions" / "s" / "artifacts"
    store = ArtifactFile(folder)
    saved = {cid: store.save(cid, "read_file", text, durable=False) for cid, text in TEXTS.items() if text}
    store.sync(False)
    assert [p.name for p in folder.iterdir()] == ["pruned.txt"]
    for cid, where in saved.items():
        assert where.first is not None and where.last is not None
        assert _read(tmp_path, where.path, where.first, where.last) == TEXTS[cid].removesuffix("\n")
    # The same call saved again (a second pass in this process) is not appended twice.
    size = (folder / "pruned.txt").stat().st_size
    assert store.save("c1", "read_file", TEXTS["c1"], durable=False).first == saved["c1"].first
    assert (folder / "pruned.txt").stat().st_size == size


def test_a_later_process_appends_after_a_torn_block(tmp_path: Path) -> None:
    folder = tmp_path / "artifacts"
    first = ArtifactFile(folder).save("a", "shell", "one\ntwo\n", durable=True)
    with open(folder / "pruned.txt", "ab") as handle:  # a crash in the middle of the next block
        handle.write(b"=== pruned result of call b (shell): lines 5")
    again = ArtifactFile(folder)  # the next process learns the line count from the file
    later = again.save("c", "shell", "three\nfour\nfive\n", durable=True)
    again.sync(True)
    lines = (folder / "pruned.txt").read_text().splitlines()
    assert lines[first.first - 1 : first.last] == ["one", "two"]
    assert lines[later.first - 1 : later.last] == ["three", "four", "five"] and later.last == len(lines)


def test_texts_a_reader_would_count_differently_get_a_file_of_their_own(tmp_path: Path) -> None:
    folder = tmp_path / "artifacts"
    store = ArtifactFile(folder)
    cr = store.save("call/1", "shell", "progress\r50%\r100%\n", durable=False)
    nul = store.save("call2", "shell", "a\0b", durable=False)
    plain = store.save("call3", "shell", "plain\n", durable=False)
    assert cr.path.name == "call_1.txt" and cr.first is None and cr.path.read_bytes() == b"progress\r50%\r100%\n"
    assert nul.path.name == "call2.txt" and nul.path.read_bytes() == b"a\0b"
    assert plain.path.name == "pruned.txt" and (plain.first, plain.last) == (2, 2)
    assert cr.where("x") == "x" and plain.where("p") == "p, lines 2-2 (read_file offset=2, limit=1)"
    # A result an older arreio saved as its own file stays there (the stub points at it): the next
    # process's store (the folder is listed once, not looked up per result) and the next pass's.
    old = folder / "old.txt"
    old.write_text("saved before\n")
    assert ArtifactFile(folder).save("old", "shell", "saved before\n", durable=False).path == old
    (folder / "older.txt").write_text("saved before\n")
    store.sync(durable=False)
    assert store.save("older", "shell", "saved before\n", durable=False).path == folder / "older.txt"

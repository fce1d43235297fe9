"""`read_file` reads a small regular file on the event loop (no thread hand-off) and a
large one in a thread, so the chain's timeout still stops a slow read; a FIFO is refused, never
waited on. Real files, a real FIFO, the real chain."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from arreio.engine.core.config import Settings
from arreio.engine.tools.base import ToolError
from arreio.engine.tools.builtin import builtin_tools
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.files import INLINE_READ_BYTES
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext


def _ctx(root: Path) -> RunContext:
    return RunContext(cwd=root, settings=Settings(tools={"timeout_s": 1}), env={"PATH": "/usr/bin:/bin"})


def test_small_files_read_on_the_loop_and_large_ones_in_a_thread(tmp_path: Path) -> None:
    (tmp_path / "small.txt").write_text("one\ntwo\n")
    (tmp_path / "large.txt").write_text("x" * 99 + "\n" * 1 + ("y" * 99 + "\n") * (INLINE_READ_BYTES // 100))
    registry, seen = ToolRegistry(builtin_tools()), {}

    async def go() -> None:
        loop_thread = threading.get_ident()
        real = asyncio.to_thread

        async def watching(func, *args, **kwargs):  # which reads were handed to a thread
            seen.setdefault("threads", []).append(args[1])
            return await real(func, *args, **kwargs)

        asyncio.to_thread = watching
        try:
            small = await run_tool(registry, "read_file", {"path": "small.txt"}, _ctx(tmp_path))
            large = await run_tool(registry, "read_file", {"path": "large.txt", "limit": 2}, _ctx(tmp_path))
        finally:
            asyncio.to_thread = real
        assert threading.get_ident() == loop_thread
        seen["small"], seen["large"] = small.content, large.content

    asyncio.run(go())
    assert seen["small"] == "     1\tone\n     2\ttwo"
    assert seen["large"].startswith("     1\t" + "x" * 99) and "showing lines 1–2 of" in seen["large"]
    assert seen["threads"] == ["large.txt"]  # only the large file went to a thread


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_a_fifo_is_refused_at_once_and_never_opened(tmp_path: Path) -> None:
    """A FIFO used to go to a thread that blocked in `open()`: the timeout fired, but `asyncio.run`
    waited for that thread at exit and the process never ended. Now it is refused from its stat."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    async def go() -> str:
        result = await run_tool(ToolRegistry(builtin_tools()), "read_file", {"path": "pipe"}, _ctx(tmp_path))
        return result.content

    content = asyncio.run(go())
    # nothing waited: a wait would have ended in the 1 s timeout (and the FIFO was never opened, below)
    assert "pipe is a named pipe, not a regular file" in content and "timed out" not in content
    with pytest.raises(OSError):  # no reader holds it open (ENXIO): it was looked at, not opened
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


CONTENTS = {
    "lf": b"one\ntwo\nthree\n",
    "no-final-newline": b"one\ntwo",
    "crlf": b"one\r\ntwo\r\n",
    "cr": b"one\rtwo\rthree",
    "mixed": b"a\r\nb\rc\nd",
    "blank-lines": b"\n\n\nx\n\n",
    "only-newline": b"\n",
    "empty": b"",
    "utf8-bom": b"\xef\xbb\xbfhead\nline\n",
    "utf16": "zwei\nZeilen\n".encode("utf-16"),
    "cp1252": b"caf\xe9\r\nna\xefve\n",
    "bad-utf8-late": b"ok\n" * 3000 + b"\xff\xfe broken\n",
    "long-line": b"x" * 2500 + b"\nshort\n",
    "unicode-separators": "a\u2028b\x0cc\x85d\n".encode(),
    "binary": b"\x89PNG\r\n\x1a\n\0\0",
}


@pytest.mark.parametrize("name", sorted(CONTENTS))
@pytest.mark.parametrize(("offset", "limit"), [(None, None), (2, 1), (1, 2), (3, None), (40, None)])
def test_the_inline_read_shows_what_the_streamed_read_shows(tmp_path: Path, name: str, offset, limit) -> None:
    """The small-file path (one open, split in memory) against the streaming path large files and
    FIFOs take (text mode, universal newlines): the same page, notes and errors, byte for byte."""
    (tmp_path / "f").write_bytes(CONTENTS[name])
    registry, ctx = ToolRegistry(builtin_tools()), _ctx(tmp_path)
    arguments = {"path": "f", **({"offset": offset} if offset else {}), **({"limit": limit} if limit else {})}
    inline = asyncio.run(run_tool(registry, "read_file", arguments, ctx))
    tool = registry.get("read_file")
    try:
        streamed = tool._read(tmp_path / "f", "f", offset or 1, limit or ctx.settings.tools.read_limit_lines)
    except ToolError as error:  # the chain adds its advice after the tool's own words
        assert inline.is_error and inline.content.startswith(f"read_file: {error.message} (")
    else:
        assert (inline.content, inline.is_error) == (streamed.content, False)

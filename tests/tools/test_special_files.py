"""A FIFO, a socket or a device in the working folder: the file tools name it, never wait on it.

A tester's FIFO froze `arreio run` for good: grep handed it to a thread that blocked in `open()`,
the tool's timeout fired, and `asyncio.run` then waited for that thread at exit (SIGINT and SIGTERM
ignored; only SIGKILL ended it). Real FIFOs, a real socket, the real chain, a real `arreio run`.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from arreio.engine.core import regular_file
from arreio.engine.core.config import Settings
from arreio.engine.core.regular_file import NotRegularFile, kind, open_regular
from arreio.engine.tools.run_context import RunContext
from tests.conftest import fifos_unblocked

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@pytest.fixture
def quick(root: Path) -> RunContext:
    """A context with a 2 s tool timeout: a blocked read shows as a timeout, not a hung test."""
    return RunContext(cwd=root, settings=Settings(tools={"timeout_s": 2}), env={"PATH": "/usr/bin:/bin"})


@pytest.fixture
def unblocker(root: Path) -> Iterator[list[Path]]:
    """A read the old code blocked on returns instead of hanging the suite (conftest.fifos_unblocked);
    the FIFOs a reader was found waiting on, for the tests to say none was (not by a time bound)."""
    with fifos_unblocked(root) as opened:
        yield opened


def test_grep_skips_a_fifo_and_finds_the_rest_at_once(call, quick, root: Path, unblocker) -> None:
    os.mkfifo(root / "pipe")
    (root / "a.txt").write_text("needle\n")
    (root / "sub").mkdir()
    os.mkfifo(root / "sub" / "deep.fifo")
    os.symlink("pipe", root / "link-to-pipe")
    result = call("grep", quick, pattern="needle")
    assert (result.content, result.is_error) == ("a.txt:1: needle", False)
    assert unblocker == []  # no FIFO was opened (and so waited on)


def test_grep_on_a_fifo_named_directly_says_what_it_is(call, quick, root: Path, unblocker) -> None:
    os.mkfifo(root / "pipe")
    result = call("grep", quick, pattern="x", path="pipe")
    assert result.is_error and "pipe is a named pipe, not a regular file" in result.content


@pytest.mark.parametrize("tool", ["read_file", "edit_file"])
def test_reading_tools_refuse_a_fifo_without_waiting(call, quick, root: Path, unblocker, tool: str) -> None:
    os.mkfifo(root / "pipe")
    os.symlink("pipe", root / "link")
    extra = {"old": "a", "new": "b"} if tool == "edit_file" else {}
    for name in ("pipe", "link"):
        result = call(tool, quick, path=name, **extra)
        assert result.is_error and "pipe is a named pipe, not a regular file" in result.content, result.content
    assert unblocker == []  # the old edit_file opened it and waited for a writer
    assert stat.S_ISFIFO((root / "pipe").lstat().st_mode)  # nothing was written over it


def test_write_file_never_replaces_a_fifo_or_a_socket(call, quick, root: Path) -> None:
    """It replaced the user's FIFO with a regular file ("overwrote pipe"): invariant 8."""
    os.mkfifo(root / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sock"))
    try:
        for name, what in (("pipe", "a named pipe"), ("sock", "a socket")):
            result = call("write_file", quick, path=name, content="x\n")
            assert result.is_error and f"{name} is {what}, not a regular file" in result.content, result.content
    finally:
        server.close()
    assert stat.S_ISFIFO((root / "pipe").lstat().st_mode) and stat.S_ISSOCK((root / "sock").lstat().st_mode)
    assert not call("write_file", quick, path="new.txt", content="x\n").is_error  # a new file still is written


def test_a_socket_is_named_as_one(call, quick, root: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sock"))
    try:
        read = call("read_file", quick, path="sock")
        listed = call("list_dir", quick)
    finally:
        server.close()
    assert read.is_error and "sock is a socket, not a regular file" in read.content
    assert "sock  (socket, not a regular file)" in listed.content.splitlines()


def test_list_dir_lists_a_fifo_without_opening_it(call, quick, root: Path) -> None:
    os.mkfifo(root / "pipe")
    (root / "a.txt").write_text("hi\n")
    result = call("list_dir", quick)
    assert result.content.splitlines() == ["./ (2 entries)", "a.txt  3 B", "pipe  (named pipe, not a regular file)"]


def test_a_link_to_a_device_outside_the_folder_is_refused(call, quick, root: Path) -> None:
    os.symlink("/dev/zero", root / "zero")
    (root / "a.txt").write_text("needle\n")
    read = call("read_file", quick, path="zero")
    assert read.is_error and "outside the working directory" in read.content
    assert call("grep", quick, pattern="needle").content == "a.txt:1: needle"


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_a_character_device_inside_the_folder_is_never_read(call, quick, root: Path) -> None:
    os.mknod(root / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
    (root / "a.txt").write_text("needle\n")
    read = call("read_file", quick, path="zero")
    assert read.is_error and "zero is a character device, not a regular file" in read.content
    assert call("grep", quick, pattern="needle").content == "a.txt:1: needle"


def test_open_regular_decides_from_stat_and_checks_the_open(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.txt").write_text("hi")
    fd, info = open_regular(tmp_path / "a.txt")
    os.close(fd)
    assert info.st_size == 2 and kind(info.st_mode) is None
    with pytest.raises(NotRegularFile) as device:
        open_regular("/dev/zero")
    assert device.value.kind == "a character device"
    # A FIFO swapped in between the stat and the open: the open does not block, fstat refuses it.
    os.mkfifo(tmp_path / "pipe")
    real_stat = os.stat
    monkeypatch.setattr(regular_file.os, "stat", lambda path, *a, **k: real_stat(tmp_path / "a.txt"))
    with pytest.raises(NotRegularFile) as swapped:
        open_regular(tmp_path / "pipe")
    monkeypatch.undo()
    assert swapped.value.because("pipe") == "pipe is a named pipe, not a regular file"


@pytest.mark.slow
def test_a_run_whose_grep_meets_a_fifo_ends(tmp_path: Path, arreio_cmd, arreio_env) -> None:
    """The tester's case end to end: the run finishes and the process exits by itself."""
    work = tmp_path / "work"
    (work / ".arreio").mkdir(parents=True)
    os.mkfifo(work / "pipe")
    (work / "a.txt").write_text("needle\n")
    (work / ".arreio" / "config.yaml").write_text("tools:\n  timeout_s: 3\n")
    script = "- tool_calls: [{name: grep, arguments: {pattern: needle}}]\n- text: done\n"
    (work / "g.yaml").write_text(script)
    proc = subprocess.Popen(
        [*arreio_cmd, "run", "x", "--script", "g.yaml", "--json"],
        cwd=work,
        env=arreio_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        pytest.fail("arreio run never exited after grep met a FIFO")
    assert proc.returncode == 0, err
    assert "a.txt:1: needle" in out and "timed out" not in out


def test_read_to_end_reads_what_is_there_up_to_the_limit(tmp_path: Path) -> None:
    from arreio.engine.core.regular_file import read_to_end

    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 10_000)
    fd, info = open_regular(path)
    try:
        assert read_to_end(fd, info.st_size) == b"x" * 10_000
    finally:
        os.close(fd)
    fd, info = open_regular(path)
    try:
        assert read_to_end(fd, info.st_size, limit=4097) == b"x" * 4097  # a capped read stops at the cap
    finally:
        os.close(fd)
    fd, info = open_regular(path)
    try:
        with path.open("ab") as grow:  # the file grew after its fstat: the read goes on to the new end
            grow.write(b"y" * 20_000)
        assert read_to_end(fd, info.st_size) == b"x" * 10_000 + b"y" * 20_000
    finally:
        os.close(fd)

"""An attempt's working copy (engine/batch/workcopy.py): what cannot be copied is skipped and
said, and what a dead worker left (the copy, the setup's process group) is cleaned up from the
ledger by whoever outlives it. Real files, real processes."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from arreio.engine.batch.workcopy import LEDGER, WorkCopy, clean


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_special_files_are_skipped_and_said_the_rest_is_copied(tmp_path: Path, tmp: Path) -> None:
    work = tmp_path / "w"
    (work / "sub" / ".arreio").mkdir(parents=True)
    (work / "a.md").write_text("A")
    (work / "sub" / "b.md").write_text("B")
    (work / "link").symlink_to("a.md")
    os.mkfifo(work / "pipe")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(work / "sub" / "sock"))
        copy = WorkCopy(tmp_path / "attempt", "t")
        copy.fill(work)
    assert sorted(str(p.relative_to(copy.path)) for p in copy.path.rglob("*")) == ["a.md", "link", "sub", "sub/b.md"]
    assert copy.skipped == [
        "pipe is a named pipe: not copied (only files, folders and links are)",
        "sub/sock is a socket: not copied (only files, folders and links are)",
    ]
    copy.remove()
    assert list(tmp.iterdir()) == [] and not (tmp_path / "attempt" / LEDGER).exists()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def gone(pid: int, within: float = 60.0) -> bool:  # a wait for a killed process, not a bound
    deadline = time.monotonic() + within
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _alive(pid)


def test_what_a_dead_worker_left_is_cleaned_from_the_ledger(tmp_path: Path, tmp: Path) -> None:
    attempt = tmp_path / "attempt"
    copy = WorkCopy(attempt, "t")
    assert copy.run("sleep 61.5 & echo $! > bg.pid", env=dict(os.environ), log=tmp_path / "setup.log", timeout=10) == 0
    background = int((copy.path / "bg.pid").read_text())
    assert _alive(background) and (attempt / LEDGER).exists()
    # The worker dies here (nothing removes the copy); whoever outlives it reads the ledger:
    clean(attempt)
    assert gone(background)
    assert list(tmp.iterdir()) == [] and not (attempt / LEDGER).exists()
    clean(attempt)  # nothing left: nothing to do


def test_a_setup_that_ran_out_of_time_is_killed_with_its_group(tmp_path: Path, tmp: Path) -> None:
    copy = WorkCopy(tmp_path / "attempt", "t")
    # None is the time-out's answer; a setup waited out (or waited for the child on the pipe) holds the test
    assert (
        copy.run(
            "sleep 602.5 & echo $! > bg.pid; sleep 603.5", env=dict(os.environ), log=tmp_path / "setup.log", timeout=0.5
        )
        is None
    )
    assert gone(int((copy.path / "bg.pid").read_text()))  # at once, not when the attempt ends
    copy.remove()
    assert list(tmp.iterdir()) == []

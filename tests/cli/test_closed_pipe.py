"""A reader that closes the pipe early (`arreio kb stats | head -0`) is not a failure: every command
exits 0 as `arreio run` and `arreio sessions list` did, with nothing on stderr; a real error still
exits with its own code. Real subprocesses, stdout a pipe whose reading end is closed before the
command starts (so every write meets it, whatever the timing)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ARREIO


def closed_pipe_run(work: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [*ARREIO, *args],
            cwd=work,
            env=env,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),  # Typer's help through rich
        ("kb", "stats"),  # a rich console of its own
        ("memory", "decision", "list"),
        ("memory", "decision", "list", "--json"),  # print()
        ("sessions", "list", "--json"),
        ("sessions", "list"),  # console_for, which already went quiet
    ],
)
def test_a_reader_that_leaves_early_is_not_a_failure(tmp_path: Path, arreio_env: dict, args: tuple[str, ...]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = closed_pipe_run(work, arreio_env, *args)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_an_error_keeps_its_code_when_the_reader_has_left(tmp_path: Path, arreio_env: dict) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = closed_pipe_run(work, arreio_env, "kb", "search", "refunds")
    assert done.returncode == 2 and "no knowledge base here yet" in done.stderr
    done = closed_pipe_run(work, arreio_env, "no-such-command")
    assert done.returncode == 2 and "No such command" in done.stderr


@pytest.mark.parametrize("reader_left", [False, True])
def test_a_failed_run_keeps_exit_1(tmp_path: Path, arreio_env: dict, reader_left: bool) -> None:
    """Only an exit a closed pipe caused becomes 0: a run that failed says 1 even to a reader that left."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "fail.yaml").write_text("replies:\n  - error: {kind: fatal, message: the model broke}\n")
    args = ("run", "Do it", "--script", "fail.yaml", "--json")
    if reader_left:
        done = closed_pipe_run(work, arreio_env, *args)
    else:
        done = subprocess.run(
            [*ARREIO, *args], cwd=work, env=arreio_env, capture_output=True, text=True, timeout=120, check=False
        )
    assert done.returncode == 1, done.stderr
    assert "the model call failed: the model broke" in done.stderr

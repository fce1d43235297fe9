"""`arreio run` with a stdout it cannot write: closed before it starts (`>&-`), open for reading only
(`1</dev/null`), or a full disk (`>/dev/full`). A stdout nobody can read stops the printing, not the
run (as a closed pipe does): the run finishes with its own code. A full disk is an error, said in one
line. Never a traceback: `--json >&-` ended in an internal error, and a view that failed mid-stream
left the pipeline to asyncio's shutdown, which printed "async generator ignored GeneratorExit" with a
traceback. Real subprocesses, real descriptors."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ARREIO

GOAL = "List the files here."


def _close_stdout() -> None:
    os.close(1)


def _run(work: Path, env: dict, *args: str, stdout=None, close: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*ARREIO, "run", GOAL, "--offline", *args],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=_close_stdout if close else None,
    )


def _report(work: Path) -> dict:
    (report,) = (work / ".arreio" / "runs").glob("*/report.json")
    return json.loads(report.read_text())


@pytest.mark.parametrize("args", [("--json",), ("--output", "json-result"), ("--output", "text"), ()])
def test_a_closed_stdout_runs_to_the_end_silently(tmp_path: Path, arreio_env, args) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = _run(work, arreio_env, *args, close=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert _report(work)["verdict"] == "success"


@pytest.mark.parametrize("args", [("--json",), ("--output", "json-result"), ("--output", "text"), ()])
def test_a_stdout_open_for_reading_only_runs_to_the_end(tmp_path: Path, arreio_env, args) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with open(os.devnull) as read_only:
        done = _run(work, arreio_env, *args, stdout=read_only)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert _report(work)["verdict"] == "success"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [("--json",), ()])
def test_a_full_disk_under_stdout_is_one_line_and_exit_1(tmp_path: Path, arreio_env, args) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with open("/dev/full", "w") as full:
        done = _run(work, arreio_env, *args, stdout=full)
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["arreio: error: no space left on the device"], done.stderr
    assert _report(work)["verdict"] in ("cancelled", "failed")  # the report lands all the same

"""A goal that is a pipe handed over by the shell — `--goal <(cmd)` — is read without blocking the run's
event loop: Ctrl-C and SIGTERM cancel while it waits (exit 130, nothing saved), and a goal that
arrives is run as any other. A FIFO on disk is refused at once instead: nobody may ever write to it.
Real processes, real FIFOs and real signals: a blocked loop is only seen in a process whose signals
it must handle."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bad_files import assert_refused
from tests.conftest import INTERRUPTIBLE

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs and /proc")]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "a.txt").write_text("hi\n")
    os.mkfifo(folder / "goal.fifo")
    return folder


def catches_sigterm(pid: int) -> bool:
    """The run has its cancel handlers in place: SIGTERM is caught only once the event loop started
    (`cli/driving.py`), right before the pipeline reads the goal."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next((line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), "0")
    return bool(int(caught, 16) >> (signal.SIGTERM - 1) & 1)


@pytest.mark.parametrize("writer", ["nobody-opens-it", "a-writer-waits"])
def test_a_named_pipe_as_the_goal_is_refused_at_once(writer, work: Path, arreio_cmd, arreio_env) -> None:
    """A FIFO on disk may be a trap (an agent's shell can make one in the working folder): it is refused
    from its stat, never opened — a writer waiting at its other end stays waiting."""
    waiting = None
    if writer == "a-writer-waits":
        waiting = subprocess.Popen(["sh", "-c", "echo 'read a.txt' > goal.fifo"], cwd=work)
    try:
        result = subprocess.run(
            [*arreio_cmd, "run", "--goal", "goal.fifo", "--offline"],
            cwd=work,
            env=arreio_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if waiting is not None:
            assert waiting.poll() is None, "the run opened the FIFO (its writer went on)"
    finally:
        if waiting is not None:
            waiting.kill()
            waiting.wait()
    assert_refused(result, says="goal file goal.fifo is a named pipe, not a regular file")
    assert not (work / ".arreio").exists()


@pytest.mark.skipif(shutil.which("bash") is None, reason="process substitution is bash's")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_cancel_while_a_goal_pipe_waits_exits_130_and_saves_nothing(how, work: Path, arreio_cmd, arreio_env) -> None:
    """`--goal <(slow command)`: a pipe handed over is read, and waited for, off the event loop."""
    script = 'exec "$@" --goal <(exec sleep 60 2>/dev/null) --offline'  # its stderr is not the test's pipe
    proc = subprocess.Popen(
        ["bash", "-c", script, "bash", *arreio_cmd, "run"],
        cwd=work,
        env=arreio_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        process_group=0,
        **INTERRUPTIBLE,
    )
    try:
        deadline = time.monotonic() + 120  # a wait for a busy machine's start, not a bound
        while not catches_sigterm(proc.pid):
            assert proc.poll() is None and time.monotonic() < deadline, "the run never started its event loop"
            time.sleep(0.05)
        time.sleep(0.3)  # well inside the wait for the goal
        proc.send_signal(how)
        try:
            _, stderr = proc.communicate(timeout=120)  # it waits for its goal for ever: any end is the signal's
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail(f"{how.name} did not end a run waiting for its goal")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the `sleep` writing the pipe too
        if proc.poll() is None:
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert "arreio: cancelled; nothing was saved" in stderr, stderr
    assert "Traceback" not in stderr
    assert not list((work / ".arreio").glob("sessions/*.jsonl")), "a cancelled goal read left a session behind"


@pytest.mark.skipif(shutil.which("bash") is None, reason="process substitution is bash's")
def test_a_goal_from_process_substitution_is_run(work: Path, arreio_cmd, arreio_env) -> None:
    script = 'exec "$@" --goal <(sleep 0.5; printf "read a.txt\\n") --offline --output text'
    result = run_in_bash(script, work, arreio_cmd, arreio_env)
    assert result.returncode == 0, result.stderr
    assert "a.txt" in result.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="process substitution is bash's")
def test_an_endless_goal_pipe_is_refused_past_the_goal_limit(work: Path, arreio_cmd, arreio_env) -> None:
    """`--goal <(yes)` was read until the memory ran out."""
    script = 'exec "$@" --goal <(exec yes) --offline'
    result = run_in_bash(script, work, arreio_cmd, arreio_env)
    assert_refused(result, says="is over the 1 MB limit for a goal")


def run_in_bash(script: str, work: Path, arreio_cmd: list[str], arreio_env: dict[str, str]):
    """`arreio run` started by a bash `script` whose `"$@"` is the arreio command (for `<(…)`)."""
    return subprocess.run(
        ["bash", "-c", script, "bash", *arreio_cmd, "run"],
        cwd=work,
        env=arreio_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

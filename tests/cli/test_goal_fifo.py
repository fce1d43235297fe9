"""A goal file that waits on its writer — a FIFO, `--goal <(cmd)` — is read without blocking the run's
event loop: Ctrl-C and SIGTERM cancel while it waits (exit 130, nothing saved), and a goal that
arrives is run as any other. Real processes, real FIFOs and real signals: a blocked loop is only
seen in a process whose signals it must handle."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

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


def open_for_writing(fifo: Path, proc: subprocess.Popen, deadline: float) -> int:
    """The FIFO's write end, opened once the run has opened it to read (ENXIO until then)."""
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            if error.errno != errno.ENXIO:
                raise
            time.sleep(0.05)
    pytest.fail("the run never opened its goal FIFO")


@pytest.mark.parametrize("writer", ["nobody-opens-it", "opened-but-silent"])
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_cancel_while_the_goal_fifo_waits_exits_130_and_saves_nothing(
    how, writer, work: Path, arreio_cmd, arreio_env
) -> None:
    proc = subprocess.Popen([*arreio_cmd, "run", "--goal", "goal.fifo", "--offline"], cwd=work, env=arreio_env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **INTERRUPTIBLE)
    held = None
    try:
        deadline = time.monotonic() + 30
        while not catches_sigterm(proc.pid):
            assert proc.poll() is None and time.monotonic() < deadline, "the run never started its event loop"
            time.sleep(0.05)
        if writer == "opened-but-silent":  # the run is past open(), waiting in read()
            held = open_for_writing(work / "goal.fifo", proc, deadline)
        time.sleep(0.3)  # well inside the wait for the goal
        proc.send_signal(how)
        sent = time.monotonic()
        try:
            _, stderr = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail(f"{how.name} did not end a run waiting for its goal")
        assert time.monotonic() - sent < 5
    finally:
        if held is not None:
            os.close(held)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert "arreio: cancelled; nothing was saved" in stderr, stderr
    assert "Traceback" not in stderr
    assert not list((work / ".arreio").glob("sessions/*.jsonl")), "a cancelled goal read left a session behind"


def test_a_goal_written_into_the_fifo_later_is_run(work: Path, arreio_cmd, arreio_env) -> None:
    def writer() -> None:
        time.sleep(1.0)  # the run waits for it
        with open(work / "goal.fifo", "w", encoding="utf-8") as fifo:
            fifo.write("read a.txt\n")

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    result = subprocess.run([*arreio_cmd, "run", "--goal", "goal.fifo", "--offline", "--output", "text"], cwd=work,
                            env=arreio_env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                            check=False)
    thread.join(timeout=5)
    assert result.returncode == 0, result.stderr
    assert "a.txt" in result.stdout
    assert len(list((work / ".arreio").glob("sessions/*.jsonl"))) == 1


@pytest.mark.skipif(shutil.which("bash") is None, reason="process substitution is bash's")
def test_a_goal_from_process_substitution_is_run(work: Path, arreio_cmd, arreio_env) -> None:
    script = 'exec "$@" --goal <(sleep 0.5; printf "read a.txt\\n") --offline --output text'
    result = subprocess.run(["bash", "-c", script, "bash", *arreio_cmd, "run"], cwd=work, env=arreio_env,
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "a.txt" in result.stdout

"""What a cancelled or killed attempt leaves behind: nothing. Ctrl-C or SIGTERM to `arreio batch` stops
each busy worker's attempt — the task's `setup` and a gate `command` killed with their process
groups, the temporary copy of the workdir removed — and lands the summary (exit 130). A worker that
dies mid-attempt, or a driver killed outright, leaves a ledger in the attempt's folder that the driver
(or the next `--resume`) cleans up from. Real processes, real signals; TMPDIR is the test's own, so
the copies can be counted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.batch.conftest import Project, fix_add_task
from tests.batch.test_batch_lifecycle import children, rows_in, wait_for
from tests.conftest import INTERRUPTIBLE

pytestmark = pytest.mark.slow


@pytest.fixture
def tmp(project: Project, tmp_path: Path) -> Path:
    """Where the attempts' copies go (`arreio-<task>-*`)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    project.env["TMPDIR"] = str(folder)
    return folder


def running(marker: str) -> list[int]:
    """Pids of live processes whose command line holds `marker` (zombies are dead)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if (
                marker in (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                and (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
            ):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def start(project: Project, suite: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        project.argv(str(suite), "-j", "1", *args),
        cwd=project.root,
        env=project.env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        **INTERRUPTIBLE,
    )


def cancelled(project: Project, driver: subprocess.Popen, sig: int) -> str:
    """Send `sig`, wait; the driver must end as a cancel (130, the summary landed); returns stderr."""
    driver.send_signal(sig)
    _, stderr = driver.communicate(timeout=30)
    assert driver.returncode == 130, stderr
    (batch,) = project.batches()
    assert stderr.strip().endswith(f"arreio: cancelled; finish it with `arreio batch --resume {batch.name}`")
    assert project.summary(batch)["stopped"] == "cancelled" and "Traceback" not in stderr
    return stderr


def left_over(marker: str, tmp: Path) -> tuple[list[int], list[str]]:
    """What is still there a moment later: processes holding `marker`, copies in `tmp`."""
    deadline = time.monotonic() + 5
    while (running(marker) or list(tmp.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.05)
    return running(marker), [p.name for p in tmp.iterdir()]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_cancel_during_setup_kills_it_and_removes_the_copy(project: Project, tmp: Path, sig: int) -> None:
    marker = "sleep 77.25"
    suite = project.suite([fix_add_task("s", setup=f"{marker}; true")])
    driver = start(project, suite)
    try:
        wait_for(lambda: running(marker), what="the setup to run")
        cancelled(project, driver, sig)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert left_over(marker, tmp) == ([], [])
    assert not list(project.root.glob(".arreio/batches/*/attempts/*/*/leftovers.json"))


def test_a_cancel_during_a_gate_kills_its_command_and_what_setup_left_running(project: Project, tmp: Path) -> None:
    """SIGTERM while a gate command runs: the run is cancelled as Ctrl-C cancels `arreio run --plan`
    (the gate's group killed), and the server the setup started (`&`) goes with the attempt."""
    suite = project.suite(
        [fix_add_task("g", setup="sleep 76.25 & true", gates=[{"kind": "command", "command": "sleep 75.25"}])]
    )
    driver = start(project, suite)
    try:
        wait_for(lambda: running("sleep 75.25"), what="the gate to run")
        assert running("sleep 76.25")  # setup's own is still up: it lives as long as the attempt
        cancelled(project, driver, signal.SIGTERM)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert left_over("sleep 7", tmp) == ([], [])


def test_a_worker_killed_mid_setup_leaves_nothing_running_and_the_retry_passes(project: Project, tmp: Path) -> None:
    once = project.root / "once"
    suite = project.suite([fix_add_task("k", setup=f"test -e {once} || {{ touch {once}; sleep 74.25; }}")])
    driver = start(project, suite, "--json")
    try:
        wait_for(lambda: running("sleep 74.25"), what="the setup to run")
        (worker,) = children(driver.pid)
        os.kill(worker, signal.SIGKILL)  # it cannot clean up: the driver must
        # The retry is a whole attempt in a new worker: seconds alone, but it once took over 60 s
        # beside a busy neighbour on two cores (a timeout here says nothing about the cancel).
        _, stderr = driver.communicate(timeout=150)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 0, stderr
    (row,) = project.rows()
    assert row["passed"] and row["tries"] == 2
    assert left_over("sleep 74.25", tmp) == ([], [])


def test_a_driver_killed_outright_is_cleaned_up_after_by_the_resume(project: Project, tmp: Path) -> None:
    once = project.root / "once"
    suite = project.suite([fix_add_task("d", setup=f"test -e {once} || {{ touch {once}; sleep 73.25; }}")])
    driver = start(project, suite)
    try:
        wait_for(lambda: running("sleep 73.25"), what="the setup to run")
        workers = children(driver.pid)
        driver.kill()  # its workers die with it (and clean nothing); the setup lives on
        driver.wait(10)
    finally:
        if driver.poll() is None:
            driver.kill()
    wait_for(lambda: all(not Path(f"/proc/{w}").exists() for w in workers), 10, "the workers to die with the driver")
    (batch,) = project.batches()
    out = project.batch("--resume", batch.name)
    assert out.returncode == 0, out.stderr
    assert [r["passed"] for r in project.rows(batch)] == [True]
    assert left_over("sleep 73.25", tmp) == ([], [])


def test_a_named_pipe_in_the_workdir_is_skipped_with_a_warning(project: Project, tmp: Path) -> None:
    workdir = project.root / "tasks" / "fix-add"
    os.mkfifo(workdir / "pipe")
    (workdir / "sub").mkdir()
    os.mkfifo(workdir / "sub" / "pipe2")
    suite = project.suite([fix_add_task("p")])
    out = project.batch(str(suite), "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    (row,) = project.rows()
    assert row["passed"] and "internal error" not in row["message"]
    assert row["warnings"] == [
        "workdir: pipe is a named pipe: not copied (only files, folders and links are)",
        "workdir: sub/pipe2 is a named pipe: not copied (only files, folders and links are)",
    ]
    attempt = json.loads(out.stdout.splitlines()[0])
    assert attempt["type"] == "attempt" and attempt["warnings"] == row["warnings"]
    assert "return a - b" in (workdir / "calc.py").read_text()  # the suite's own copy is never touched
    assert rows_in(project) == 1 and list(tmp.iterdir()) == []
    shown = project.batch(str(suite)).stdout  # and the plain view says it on the row's line
    assert "✓ p #1" in shown and "(warning: workdir: pipe is a named pipe: not copied" in shown and "+1 more" in shown

"""A batch over time: killed and resumed, stopped by a budget, a worker lost mid-attempt, learning
from the wins, cassettes recorded then replayed, the live view at a terminal."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.batch.conftest import SAMPLE, Project, fix_add_task
from tests.terminal import Terminal

pytestmark = pytest.mark.slow

SLOW_FIX = [  # the fix-add replies, the first one streamed slowly (about 3 s)
    {
        "text": "slowly",
        "chunk_chars": 1,
        "delay_s": 0.5,
        "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
    },
    {
        "tool_calls": [
            {"name": "edit_file", "arguments": {"path": "calc.py", "old": "return a - b", "new": "return a + b"}}
        ]
    },
    {"text": "Fixed `calc.py`."},
]


def wait_for(check, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def rows_in(project: Project) -> int:
    batches = project.root / ".arreio" / "batches"
    files = list(batches.glob("*/results.jsonl")) if batches.exists() else []
    return sum(1 for f in files for line in f.read_text().splitlines() if line.strip())


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def test_a_killed_batch_resumes_without_rerunning_what_finished(project: Project) -> None:
    # Only the middle task is slow: it is what the driver is killed in (the first row is in, the batch
    # is not done); the resume reruns it, and a slow first or last task would only be waited out.
    slow = project.script("slow.yaml", SLOW_FIX)
    suite = project.suite([fix_add_task("t0"), fix_add_task("t1", script=slow), fix_add_task("t2")])
    driver = subprocess.Popen(
        project.argv(str(suite), "-j", "1"),
        cwd=project.root,
        env=project.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: rows_in(project) >= 1, what="the first row")
        workers = children(driver.pid)
        driver.kill()  # no chance to clean up: only what is on disk counts
        driver.wait(10)
    finally:
        if driver.poll() is None:
            driver.kill()
    wait_for(lambda: all(not Path(f"/proc/{w}").exists() for w in workers), 10, "the workers to die with the driver")
    (batch,) = project.batches()
    before = project.rows(batch)
    assert 1 <= len(before) < 3 and not (batch / "summary.json").exists()
    out = project.batch("--resume", batch.name[:10])
    assert out.returncode == 0, out.stderr
    after = project.rows(batch)
    keys = [(r["task"], r["attempt"]) for r in after]
    assert sorted(keys) == [(f"t{i}", 1) for i in range(3)] and len(set(keys)) == 3  # each once, none lost
    assert after[: len(before)] == before  # what finished was kept as it was
    assert project.summary(batch)["attempts"] == 3
    assert f"3 attempts (local, {len(before)} done before)" in out.stdout


def test_a_budget_stops_new_attempts_with_a_partial_summary(project: Project) -> None:
    suite = project.suite([fix_add_task(f"t{i}") for i in range(3)])
    out = project.batch(str(suite), "-j", "1", "--max-tokens", "1")
    assert out.returncode == 4, out.stderr
    summary = project.summary()
    assert summary["attempts"] == 1 and summary["planned"] == 3 and summary["exit_code"] == 4
    assert summary["stopped"].startswith("budget reached:") and "--max-tokens 1" in summary["stopped"]
    assert "stopped: budget reached" in out.stdout


def test_a_worker_killed_mid_attempt_is_retried(project: Project) -> None:
    slow = project.script("slow.yaml", SLOW_FIX)
    suite = project.suite([fix_add_task("slow", script=slow)])
    driver = subprocess.Popen(
        project.argv(str(suite), "-j", "1", "--json"),
        cwd=project.root,
        env=project.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    wait_for(
        lambda: (
            list((project.root / ".arreio" / "batches").glob("*/attempts/slow/1/sessions/*.jsonl"))
            if (project.root / ".arreio" / "batches").exists()
            else False
        ),
        what="the attempt to start",
    )
    (worker,) = children(driver.pid)
    os.kill(worker, signal.SIGKILL)
    stdout, stderr = driver.communicate(timeout=60)
    assert driver.returncode == 0, stderr
    (row,) = project.rows()
    assert row["passed"] and row["tries"] == 2 and row["worker"] != f"local:{worker}"
    assert json.loads(stdout.splitlines()[-1])["retried"] == 1


def test_learn_uses_only_the_attempts_that_passed_once(project: Project) -> None:
    # Two passing attempts keep their outputs under build/: a convention (one run's files are an episode,
    # not a lesson). The failed attempt, which wrote nothing there, is not learned from.
    notes = {
        "goal": "Read `notes.md` and write a short summary to `build/notes-summary.md`.",
        "workdir": "tasks/write-notes",
        "model": "offline",
        "gates": [{"kind": "file", "path": "build/notes-summary.md"}],
    }
    suite = project.suite(
        [
            {"id": "notes", **notes},
            {
                "id": "notes-again",
                **notes,
                "goal": "Read `notes.md` and write its headings to `build/headings.md`.",
                "gates": [{"kind": "file", "path": "build/headings.md"}],
            },
            fix_add_task("broken", gates=[{"kind": "command", "command": "exit 1"}]),
        ]
    )
    out = project.batch(str(suite), "--learn", "--json")
    assert out.returncode == 1, out.stderr  # one task failed; learning never changes that
    summary = json.loads(out.stdout.splitlines()[-1])
    assert summary["learning"]["attempts"] == 2 and summary["learning"]["applied"] >= 1, summary
    memory = (project.root / ".arreio" / "MEMORY.md").read_text()
    assert "`build/`" in memory and "notes-summary" not in memory, memory
    (batch,) = project.batches()
    learned = [json.loads(line) for line in (batch / "learned.jsonl").read_text().splitlines()]
    assert sorted(r["task"] for r in learned) == ["notes", "notes-again"]
    # a resume learns nothing twice
    again = project.batch("--resume", batch.name, "--learn", "--json")
    assert json.loads(again.stdout.splitlines()[-1])["learning"]["attempts"] == 0
    # the next batch's attempts start from the suite's memory
    project.batch(str(suite), "--filter", "notes")
    latest = project.batches()[-1]
    assert (latest / "attempts" / "notes" / "1" / "MEMORY.md").read_text() == memory


def test_recorded_cassettes_replay_a_suite_hermetically(project: Project) -> None:
    suite = project.suite([fix_add_task("fix")])
    out = project.batch(str(suite), "--record", "cassettes")
    assert out.returncode == 0, out.stderr
    cassette = project.root / "cassettes" / "fix.cassette.jsonl"
    assert json.loads(cassette.read_text().splitlines()[0])["format"] == "arreio-cassette"
    # the script now would fail the gate; the replay serves what was recorded instead
    (project.root / "tasks" / "fix-add" / "replies.yaml").write_text("- text: nothing to do\n")
    replayed = project.batch(str(suite), "--replay", "cassettes", "--json")
    assert replayed.returncode == 0, replayed.stderr
    (row,) = project.rows()
    assert row["passed"] and row["cost_usd"] == 0.0 and row["steps"] == 3
    # a cassette named in the suite serves the task the same way
    shutil.copy(cassette, project.root / "fix.cassette.jsonl")
    task = fix_add_task("fix", cassette="fix.cassette.jsonl")
    del task["script"]
    assert project.batch(str(project.suite([task], name="hermetic.yaml"))).returncode == 0


def test_the_live_view_at_a_terminal(project: Project) -> None:
    term = Terminal(project.argv(str(SAMPLE / "suite.yaml"), "-j", "2"), cwd=project.root, env=project.env)
    term.expect(r"running", timeout=30)
    term.expect(r"3/3 attempts · 3 passed", timeout=60)
    assert term.wait(30) == 0
    text = term.plain
    assert "done ·" in text and "elapsed" in text and "✓ fix-add #1" in text


def test_ctrl_c_stops_the_workers_and_lands_a_partial_summary(project: Project) -> None:
    from tests.conftest import INTERRUPTIBLE

    slow = project.script("slow.yaml", SLOW_FIX)
    suite = project.suite([fix_add_task("fast")] + [fix_add_task(f"s{i}", script=slow) for i in range(3)])
    driver = subprocess.Popen(
        project.argv(str(suite), "-j", "1"),
        cwd=project.root,
        env=project.env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        **INTERRUPTIBLE,
    )
    wait_for(lambda: rows_in(project) >= 1, what="the first row")
    workers = children(driver.pid)
    driver.send_signal(signal.SIGINT)
    _, stderr = driver.communicate(timeout=30)
    assert driver.returncode == 130
    (batch,) = project.batches()
    assert stderr.strip().endswith(f"arreio: cancelled; finish it with `arreio batch --resume {batch.name}`")
    summary = project.summary(batch)
    assert summary["stopped"] == "cancelled" and summary["exit_code"] == 130 and summary["attempts"] < 4
    wait_for(
        lambda: all(
            not Path(f"/proc/{w}").exists() or "Z" in Path(f"/proc/{w}/stat").read_text().split()[2] for w in workers
        ),
        10,
        "the workers to stop",
    )

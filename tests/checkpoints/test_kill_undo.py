"""A run SIGKILLed in the middle of a tool round can still be undone: the checkpoint before the round and
its index line are on disk before the call runs. An undo SIGKILLed while its git writes the tree takes
that git with it, so the undo after it does not race a leftover git."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = """\
- text: "First round."
  tool_calls:
    - {name: write_file, arguments: {path: a.txt, content: "agent wrote this\\n"}}
- text: "Second round, slow."
  tool_calls:
    - {name: shell, arguments: {command: "rm b.txt; echo new > c.txt; sleep 3"}}
- text: "Never reached."
"""


@pytest.mark.slow
def test_undo_after_a_sigkill_mid_round(tmp_path: Path, arreio_env, arreio_cmd) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "GOAL.md").write_text("# Crash drill\n\nDo the scripted work.\n")
    (work / "s.yaml").write_text(SCRIPT)
    (work / "a.txt").write_text("the user's a\n")
    (work / "b.txt").write_text("the user's b\n")
    cmd = arreio_cmd + ["run", "--goal", "GOAL.md", "--script", "s.yaml", "--json", "--yes"]
    proc = subprocess.Popen(cmd, cwd=work, env=arreio_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:
            event = json.loads(line)
            if event["type"] == "tool_start" and event["name"] == "shell":
                break
        deadline = time.monotonic() + 20
        while not (work / "c.txt").exists() and time.monotonic() < deadline:  # the shell is in its sleep
            time.sleep(0.02)
        assert (work / "c.txt").exists() and not (work / "b.txt").exists()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL

    listed = subprocess.run(
        arreio_cmd + ["checkpoints", "list"],
        cwd=work,
        env=arreio_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "unfinished" in listed.stdout, listed.stdout + listed.stderr
    undo = subprocess.run(
        arreio_cmd + ["undo", "--yes"], cwd=work, env=arreio_env, capture_output=True, text=True, timeout=60
    )
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert "did not finish" in undo.stdout
    assert (work / "a.txt").read_text() == "the user's a\n" and (work / "b.txt").read_text() == "the user's b\n"
    assert not (work / "c.txt").exists()


SLOW_GIT = """\
#!{python}
# A git that is slow once, in the step that writes the working tree: it says who it is and what it
# holds open, then sleeps before it runs the real git. A git left running after `arreio undo` died
# would write the tree behind the back of the undo that comes next.
import json, os, sys, time
def target(fd):
    try:
        return os.readlink(f"/proc/self/fd/{{fd}}")
    except OSError:  # the descriptor listdir itself had open
        return None
if "checkout-index" in sys.argv and not os.path.exists({marker!r}):
    held = [target(fd) for fd in os.listdir("/proc/self/fd")]
    with open({marker!r} + ".tmp", "w") as out:
        json.dump({{"pid": os.getpid(), "held": held}}, out)
    os.replace({marker!r} + ".tmp", {marker!r})
    time.sleep(30)
os.execv({git!r}, [{git!r}, *sys.argv[1:]])
"""


def _gone(pid: int) -> bool:
    """The process is over: no such pid, or a zombie nobody reaped yet (it writes nothing)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return any(line.split()[1:2] == ["Z"] for line in status.splitlines() if line.startswith("State:"))


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("git") is None, reason="/proc, git")
def test_a_sigkilled_undo_takes_its_git_with_it_and_the_next_undo_works(tmp_path: Path, arreio_env, arreio_cmd) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "GOAL.md").write_text("# Drill\n\nDo the scripted work.\n")
    (work / "s.yaml").write_text(
        '- tool_calls:\n    - {name: write_file, arguments: {path: a.txt, content: "agent\\n"}}\n'
        '    - {name: write_file, arguments: {path: c.txt, content: "new\\n"}}\n- text: done\n'
    )
    (work / "a.txt").write_text("the user's a\n")
    ran = subprocess.run(
        arreio_cmd + ["run", "--goal", "GOAL.md", "--script", "s.yaml", "--yes", "--output", "text"],
        cwd=work,
        env=arreio_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert (work / "a.txt").read_text() == "agent\n" and (work / "c.txt").exists()

    tools = tmp_path / "slow-git"  # outside the working folder, first on PATH
    tools.mkdir()
    marker = tmp_path / "git-started.json"
    (tools / "git").write_text(SLOW_GIT.format(python=sys.executable, marker=str(marker), git=shutil.which("git")))
    (tools / "git").chmod(0o755)
    env = {**arreio_env, "PATH": f"{tools}{os.pathsep}{arreio_env.get('PATH', os.defpath)}"}
    undo = subprocess.Popen(
        arreio_cmd + ["undo", "--yes"],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    git_pid = None
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert undo.poll() is None and time.monotonic() < deadline, undo.communicate()
            time.sleep(0.02)
        started = json.loads(marker.read_text())
        git_pid = started["pid"]
        undo.send_signal(signal.SIGKILL)
        undo.communicate(timeout=30)
        deadline = time.monotonic() + 10
        while not _gone(git_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(git_pid), "git went on writing the tree after `arreio undo` was killed"
    finally:
        if undo.poll() is None:
            undo.kill()
            undo.communicate()
        if git_pid is not None and not _gone(git_pid):
            os.kill(git_pid, signal.SIGKILL)
    assert (work / "a.txt").read_text() == "agent\n", "the killed undo's git wrote the tree"
    # While it ran, git held the store's lock too: one that outlived arreio would be waited for, not raced.
    assert str(work / ".arreio" / "checkpoints" / "lock") in started["held"], started["held"]

    again = subprocess.run(
        arreio_cmd + ["undo", "--yes"], cwd=work, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert (work / "a.txt").read_text() == "the user's a\n" and not (work / "c.txt").exists()
    listed = subprocess.run(
        arreio_cmd + ["checkpoints", "list"], cwd=work, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert listed.returncode == 0 and "undo-" in listed.stdout, listed.stdout + listed.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_lock_files_a_killed_git_left_do_not_fail_later_checkpoints_or_undos(tmp_path: Path) -> None:
    """Before, one `….lock` a SIGKILLed git left behind made every later `update-ref` or `read-tree`
    fail ("File exists"): no run could checkpoint, no undo restore, until someone deleted it by hand."""
    from arreio.engine.checkpoints.restore import write_back
    from arreio.engine.checkpoints.store import ShadowRepo

    work = tmp_path / "w"
    work.mkdir()
    (work / "a.txt").write_text("the user's a\n")
    state = work / ".arreio"

    def store() -> ShadowRepo:  # a new process's view of the store
        return ShadowRepo(state, work, git=shutil.which("git") or "git", max_file_bytes=1 << 20)

    first = store()
    with first.lock():
        before = first.snapshot().tree
    (work / "a.txt").write_text("the agent's a\n")
    for stale in (
        first.git_dir / f"{first.tree_ref}.lock",
        first.git_dir / "refs/arreio/runs/r1.lock",
        first.git_dir / "packed-refs.lock",
        first.tree_dir / "restore.index.lock",
        first.tree_dir / "index.lock",
    ):
        stale.parent.mkdir(parents=True, exist_ok=True)
        stale.write_text("")
    later = store()
    with later.lock():
        after = later.snapshot().tree  # writes the index, the tree and its ref
        assert after != before
        assert write_back(later, before, ["a.txt"], []) == []
    assert (work / "a.txt").read_text() == "the user's a\n"

"""A run SIGKILLed in the middle of a tool round can still be undone: the checkpoint before the round and
its index line are on disk before the call runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
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

    listed = subprocess.run(arreio_cmd + ["checkpoints", "list"], cwd=work, env=arreio_env, capture_output=True,
                            text=True, timeout=60, check=False)
    assert "unfinished" in listed.stdout, listed.stdout + listed.stderr
    undo = subprocess.run(arreio_cmd + ["undo", "--yes"], cwd=work, env=arreio_env, capture_output=True, text=True,
                          timeout=60)
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert "did not finish" in undo.stdout
    assert (work / "a.txt").read_text() == "the user's a\n" and (work / "b.txt").read_text() == "the user's b\n"
    assert not (work / "c.txt").exists()

"""SIGKILL a real `arreio run` process at several points, then resume it to success.

This is docs/architecture.md invariant 2 under fire: whatever instant the process dies, the session loads
(torn tail repaired, unfinished calls healed), no complete line before the kill is lost, and
`--resume` finishes the job.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing
from tests.conftest import INTERRUPTIBLE

SCRIPT = """\
- text: "Starting the work now, step by step."
  chunk_chars: 4
  delay_s: 0.03
  tool_calls:
    - {name: write_file, arguments: {path: a.txt, content: "A\\n"}}
    - {name: shell, arguments: {command: "sleep 0.5; echo slept"}}
    - {name: write_file, arguments: {path: b.txt, content: "B\\n"}}
- text: "Second round."
  tool_calls:
    - {name: shell, arguments: {command: "sleep 0.4; echo again > c.txt"}}
- text: "Finished everything that was asked."
  chunk_chars: 4
  delay_s: 0.03
"""

# (description, predicate over the events seen so far) — the process is killed when it first holds.
KILL_POINTS = {
    "mid-stream": lambda seen: sum(e["type"] == "text_delta" for e in seen) >= 2,
    "mid-tool": lambda seen: any(e["type"] == "tool_start" and e["call_id"] == "call_0_1" for e in seen),
    "between-calls": lambda seen: any(e["type"] == "tool_end" and e["call_id"] == "call_0_1" for e in seen),
    "second-round-tool": lambda seen: any(e["type"] == "tool_start" and e["call_id"] == "call_1_0" for e in seen),
    "final-answer-stream": lambda seen: sum(e["type"] == "text_delta" for e in seen) >= 12,
}


@pytest.mark.slow
@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_sigkill_then_resume(point: str, tmp_path: Path, arreio_env, arreio_cmd) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "GOAL.md").write_text("# Crash drill\n\nDo the scripted work.\n")
    (work / "script.yaml").write_text(SCRIPT)
    cmd = arreio_cmd + ["run", "--goal", "GOAL.md", "--script", "script.yaml", "--json", "--yes"]
    proc = subprocess.Popen(cmd, cwd=work, env=arreio_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[dict] = []
    try:
        for line in proc.stdout:
            seen.append(json.loads(line))
            if KILL_POINTS[point](seen):
                os.kill(proc.pid, signal.SIGKILL)
                break
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL, f"the run ended before the kill point: {seen[-1:]}"
    session_id = seen[0]["session_id"]
    path = work / ".arreio" / "sessions" / f"{session_id}.jsonl"

    # Loads read-only: only the repairs a crash can cause, and every finished call is on disk.
    session, repairs = Session.open(path, repair=False)
    assert {r.kind for r in repairs} <= {"torn_tail", "interrupted_result"}
    assert check_pairing(session.messages) == []
    done_calls = {e["call_id"] for e in seen if e["type"] == "tool_end"}
    ok_on_disk = {
        m.tool_result_part.call_id for m in session.messages if m.role == "tool" and m.tool_result_part.status == "ok"
    }
    assert done_calls <= ok_on_disk

    resumed = subprocess.run(
        arreio_cmd + ["run", "--resume", session_id, "--script", "script.yaml", "--json", "--yes"],
        cwd=work,
        env=arreio_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    events = [json.loads(line) for line in resumed.stdout.splitlines()]
    assert events[0]["resumed"] is True
    assert events[-1]["final_text"] == "Finished everything that was asked."
    final, repairs = Session.open(path, repair=False)
    assert repairs == [] and check_pairing(final.messages) == []
    assert (work / "a.txt").exists() or point == "mid-stream"


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_cancel_exits_130_with_a_valid_session_and_a_report(how, tmp_path: Path, arreio_env, arreio_cmd) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "GOAL.md").write_text("# Crash drill\n\nDo the scripted work.\n")
    (work / "script.yaml").write_text(SCRIPT)
    cmd = arreio_cmd + ["run", "--goal", "GOAL.md", "--script", "script.yaml", "--json", "--yes"]
    proc = subprocess.Popen(
        cmd, cwd=work, env=arreio_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **INTERRUPTIBLE
    )
    seen: list[dict] = []
    for line in proc.stdout:
        seen.append(json.loads(line))
        if KILL_POINTS["mid-tool"](seen):
            proc.send_signal(how)
            break
    rest, stderr = proc.communicate(timeout=30)
    seen += [json.loads(line) for line in rest.splitlines()]
    assert proc.returncode == 130, stderr
    session_id = seen[0]["session_id"]
    assert f"arreio run --resume {session_id}" in stderr
    assert seen[-1]["type"] == "done" and seen[-1]["verdict"] == "cancelled"
    session, repairs = Session.open(work / ".arreio" / "sessions" / f"{session_id}.jsonl", repair=False)
    assert repairs == [] and check_pairing(session.messages) == []  # the cancel itself kept pairing whole
    report = json.loads(next((work / ".arreio" / "runs").glob("*/report.json")).read_text())
    assert report["verdict"] == "cancelled" and report["exit_code"] == 130
    # what --json printed is what was saved: the interrupted call is closed, and `done` is the same
    saved = [json.loads(line) for line in (work / report["events_path"]).read_text().splitlines()]
    assert seen[-1] == saved[-1] and seen[-1]["report_path"]
    assert [e["status"] for e in seen if e["type"] == "tool_end" and e["call_id"] == "call_0_1"] == ["interrupted"]

"""User hooks run in every door of the one conveyor: each message of `arreio chat`, the resume after
`arreio approve`, and each attempt of `arreio batch` (a notification when an attempt fails)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.batch.conftest import fix_add_task, make_project
from tests.conftest import run_cli

pytestmark = pytest.mark.slow

DUMP = """\
import json, sys
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(json.load(sys.stdin)) + "\\n")
"""


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / ".arreio" / "hooks").mkdir(parents=True)
    (folder / ".arreio" / "hooks" / "dump.py").write_text(DUMP)
    return folder


def test_each_chat_message_is_submitted_to_the_hooks(work, arreio_env, arreio_cmd, tmp_path) -> None:
    seen = tmp_path / "prompts.jsonl"
    (work / ".arreio" / "config.yaml").write_text(
        f"hooks:\n  user_prompt_submit:\n    - {{command: [python3, .arreio/hooks/dump.py, '{seen}']}}\n"
    )
    (work / "s.yaml").write_text('- text: "One."\n- text: "Two."\n')
    done = subprocess.run(
        [*arreio_cmd, "chat", "--script", "s.yaml"],
        cwd=work,
        env=arreio_env,
        input="first\nsecond\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [e["prompt"] for e in lines(seen)] == ["first", "second"]
    assert len({e["session_id"] for e in lines(seen)}) == 1 and len({e["run_id"] for e in lines(seen)}) == 2


def test_the_guard_runs_again_when_an_approved_call_resumes(work, arreio_env, tmp_path) -> None:
    seen = tmp_path / "calls.jsonl"
    (work / ".arreio" / "config.yaml").write_text(
        f"hooks:\n  pre_tool_use:\n    - {{match: shell, command: [python3, .arreio/hooks/dump.py, '{seen}']}}\n"
        f"  post_tool_use:\n    - {{match: shell, command: [python3, .arreio/hooks/dump.py, '{seen}']}}\n"
    )
    (work / "s.yaml").write_text(
        '- tool_calls: [{name: shell, arguments: {command: "echo ran >> log.txt"}}]\n- text: "Logged."\n'
    )
    paused = run_cli(work, arreio_env, "run", "--script", "s.yaml", "--json", "Log it")
    assert paused.returncode == 3, paused.stderr
    assert [e["hook_event_name"] for e in lines(seen)] == ["pre_tool_use"]
    sid = json.loads(paused.stdout.splitlines()[0])["session_id"]
    approved = run_cli(work, arreio_env, "approve", sid, "--script", "s.yaml")
    assert approved.returncode == 0, approved.stderr
    assert (work / "log.txt").read_text() == "ran\n"
    events = lines(seen)
    assert [e["hook_event_name"] for e in events] == ["pre_tool_use", "pre_tool_use", "post_tool_use"]
    assert len({e["call_id"] for e in events}) == 1
    assert events[2]["tool_response"] == {"content": events[2]["tool_response"]["content"], "is_error": False}


def test_a_failed_batch_attempt_posts_a_notification(tmp_path) -> None:
    project = make_project(tmp_path)
    log = tmp_path / "notify.log"
    (project.root / ".arreio").mkdir()
    (project.root / ".arreio" / "config.yaml").write_text(
        "hooks:\n  stop:\n    - {match: 'failed|partial|paused|cancelled', "
        f"command: [sh, -c, 'cat >> {log}; echo >> {log}']}}\n"
    )
    failing = fix_add_task("bad-gate", gates=[{"kind": "command", "command": "exit 3"}])
    suite = project.suite([fix_add_task("ok"), failing])
    out = project.batch(str(suite), "-j", "2")
    assert out.returncode == 1, out.stderr
    (note,) = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert note["hook_event_name"] == "stop" and note["verdict"] == "failed" and note["exit_code"] == 1
    rows = {r["task"]: r for r in project.rows()}
    assert note["run_id"] == rows["bad-gate"]["run_id"]

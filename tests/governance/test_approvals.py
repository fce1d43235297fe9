"""Approvals: pause → exit 3 → approve → the same call runs exactly once; deny; refuse a second
decision; survive a kill between pause and approve; policy allow/ask/deny; --yes; interactive ask."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing
from arreio.engine.walls.policy import decide
from arreio.engine.walls.settings import GovernanceSettings, PolicyRule
from tests.governance.helpers import kinds, run, write_config

SCRIPT = """\
- text: "Listing, then logging."
  tool_calls:
    - {name: list_dir, arguments: {}}
    - {name: shell, arguments: {command: "echo ran >> log.txt"}}
    - {name: write_file, arguments: {path: after.txt, content: "after"}}
- text: "All done."
"""
SHELL_CALL = "call_0_1"


def events_of(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def session_file(work: Path, sid: str) -> Path:
    return work / ".arreio" / "sessions" / f"{sid}.jsonl"


def pause(work: Path, cli) -> tuple[str, list[dict]]:
    (work / "s.yaml").write_text(SCRIPT)
    first = cli("run", "--goal", "GOAL.md", "--script", "s.yaml", "--json")
    assert first.exit_code == 3, first.output
    events = events_of(first.stdout)
    return events[0]["session_id"], events


def test_pause_then_approve_runs_the_same_call_exactly_once(work: Path, cli) -> None:
    sid, events = pause(work, cli)
    required = [e for e in events if e["type"] == "approval_required"]
    assert required[0]["call_id"] == SHELL_CALL and required[0]["command"] == f"arreio approve {sid}"
    assert events[-1]["verdict"] == "paused" and f"arreio approve {sid}" in events[-1]["message"]
    assert not (work / "log.txt").exists() and not (work / "after.txt").exists()
    # the pending calls stay open on disk: loading does not heal them into `interrupted`
    session, repairs = Session.open(session_file(work, sid), repair=False)
    assert repairs == [] and [m.role for m in session.messages] == ["user", "assistant", "tool"]
    assert session.extra[-1]["status"] == "pending" or any(r.get("status") == "pending" for r in session.extra)

    second = cli("approve", sid[:14], "--script", "s.yaml", "--json")
    assert second.exit_code == 0, second.output
    resumed = events_of(second.stdout)
    starts = [e["call_id"] for e in events + resumed if e["type"] == "tool_start"]
    assert starts.count(SHELL_CALL) == 1 and starts == ["call_0_0", SHELL_CALL, "call_0_2"]
    assert (work / "log.txt").read_text() == "ran\n" and (work / "after.txt").read_text() == "after"
    assert resumed[-1]["final_text"] == "All done."
    final, repairs = Session.open(session_file(work, sid), repair=False)
    assert repairs == [] and check_pairing(final.messages) == []
    decisions = [r for r in final.extra if r.get("type") == "approval"]
    assert [d["status"] for d in decisions] == ["pending", "approved"] and decisions[1]["by"]
    report = json.loads((work / resumed[-1]["report_path"]).read_text())
    assert report["approvals"][0]["status"] == "approved"


def test_an_approval_that_cannot_resume_is_not_used_up(work: Path, cli) -> None:
    sid, _ = pause(work, cli)
    bad_model = cli("approve", sid, "--model", "bogus/x")
    assert bad_model.exit_code == 5 and "bogus" in bad_model.stderr
    missing = cli("approve", sid, "--script", "no-such.yaml")
    assert missing.exit_code == 2
    session, _ = Session.open(session_file(work, sid), repair=False)
    assert [r["status"] for r in session.extra if r.get("type") == "approval"] == ["pending"]  # still waiting
    assert cli("approve", sid, "--script", "s.yaml").exit_code == 0
    assert (work / "log.txt").read_text() == "ran\n"


def test_a_decided_call_cannot_be_decided_again(work: Path, cli) -> None:
    sid, _ = pause(work, cli)
    assert cli("approve", sid, "--script", "s.yaml").exit_code == 0
    again = cli("approve", sid, "--script", "s.yaml")
    assert again.exit_code == 2 and "already approved" in again.stderr and "Traceback" not in again.output
    assert (work / "log.txt").read_text() == "ran\n"
    assert cli("approve", "nope").exit_code == 2


def test_deny_gives_the_model_a_denial_and_the_run_goes_on(work: Path, cli) -> None:
    sid, _ = pause(work, cli)
    result = cli("approve", sid, "--deny", "--reason", "not on my machine", "--script", "s.yaml", "--json")
    assert result.exit_code == 0, result.output
    assert not (work / "log.txt").exists() and (work / "after.txt").exists()
    session, _ = Session.open(session_file(work, sid), repair=False)
    denial = next(
        m.tool_result_part for m in session.messages if m.role == "tool" and m.tool_result_part.call_id == SHELL_CALL
    )
    assert denial.is_error and "not on my machine" in denial.content and "denied by" in denial.content
    assert events_of(result.stdout)[-1]["final_text"] == "All done."


@pytest.mark.slow
def test_kill_between_pause_and_approve(work: Path, cli, arreio_env, arreio_cmd) -> None:
    (work / "s.yaml").write_text(SCRIPT)
    cmd = arreio_cmd + ["run", "--goal", "GOAL.md", "--script", "s.yaml", "--json"]
    proc = subprocess.Popen(cmd, cwd=work, env=arreio_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[dict] = []
    try:
        for line in proc.stdout:
            seen.append(json.loads(line))
            if seen[-1]["type"] == "approval_required":
                os.kill(proc.pid, signal.SIGKILL)  # no report, no end marker, no clean close
                break
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    sid = seen[0]["session_id"]
    approved = subprocess.run(
        arreio_cmd + ["approve", sid, "--script", "s.yaml", "--json"],
        cwd=work,
        env=arreio_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert approved.returncode == 0, approved.stderr
    assert (work / "log.txt").read_text() == "ran\n" and (work / "after.txt").exists()
    assert events_of(approved.stdout)[-1]["final_text"] == "All done."


def test_yes_approves_everything_for_the_run(work: Path, cli) -> None:
    (work / "s.yaml").write_text(SCRIPT)
    result = cli("run", "--goal", "GOAL.md", "--script", "s.yaml", "--json", "--yes")
    assert result.exit_code == 0 and (work / "log.txt").read_text() == "ran\n"


def test_policy_allows_denies_and_asks(work: Path) -> None:
    write_config(
        work,
        (
            "governance:\n  policy:\n"
            "    - {tool: shell, match: '^echo ', action: allow}\n"
            "    - {tool: shell, match: 'rm -rf', action: deny}\n"
        ),
    )
    replies = [
        {
            "tool_calls": [
                {"name": "shell", "arguments": {"command": "echo allowed"}},
                {"name": "shell", "arguments": {"command": "rm -rf build"}},
            ]
        },
        {"tool_calls": [{"name": "shell", "arguments": {"command": "echo sneaky; touch pwned"}}]},
        {"text": "never reached"},
    ]
    events, _ = run(work, replies)
    ends = kinds(events, "tool_end")
    assert ends[0].preview.startswith("allowed") and ends[1].is_error and "denied by policy" in ends[1].preview
    assert events[-1].exit_code == 3 and kinds(events, "approval_required")[0].arguments["command"].startswith(
        "echo sneaky"
    )
    assert not (work / "pwned").exists()


def test_policy_decisions_are_pure() -> None:
    settings = GovernanceSettings(
        policy=[PolicyRule(tool="shell", match=r"^git (status|diff|log)\b", action="allow")],
        write_allow=["build/**"],
        sensitive_tools=["deploy"],
    )
    assert decide(settings, "shell", {"command": "git status"}, tool_sensitive=True).action == "allow"
    assert decide(settings, "shell", {"command": "git status && curl x | sh"}, tool_sensitive=True).action == "ask"
    assert decide(settings, "shell", {"command": "make"}, tool_sensitive=True).action == "ask"
    assert decide(settings, "write_file", {"path": "build/out.md"}, tool_sensitive=False).action == "allow"
    assert decide(settings, "write_file", {"path": "src/main.py"}, tool_sensitive=False).action == "ask"
    assert decide(settings, "write_file", {"path": "build/../src/x"}, tool_sensitive=False).action == "ask"
    assert decide(settings, "deploy", {}, tool_sensitive=False).action == "ask"
    assert decide(settings, "read_file", {"path": "src/main.py"}, tool_sensitive=False).action == "allow"


def test_an_interactive_terminal_is_asked_instead_of_pausing(work: Path) -> None:
    asked: list[str] = []

    def say_no(event) -> bool:
        asked.append(event.name)
        return False

    replies = [{"tool_calls": [{"name": "shell", "arguments": {"command": "touch nope"}}]}, {"text": "fine"}]
    events, report = run(work, replies, ask=say_no)
    assert asked == ["shell"] and events[-1].exit_code == 0 and not (work / "nope").exists()
    assert kinds(events, "tool_end")[0].is_error and report["approvals"][0]["status"] == "denied"
    events, _ = run(work / "again", replies, ask=lambda event: True)
    assert (work / "again" / "nope").exists() and events[-1].verdict == "success"


def test_a_new_goal_on_a_paused_session_closes_the_waiting_calls(work: Path, cli) -> None:
    sid, _ = pause(work, cli)
    (work / "next.md").write_text("Something else.\n")
    (work / "t.yaml").write_text("- text: first\n- text: the new answer\n")
    result = cli("run", "--resume", sid, "--goal", "next.md", "--script", "t.yaml", "--json")
    assert result.exit_code == 0, result.output
    session, repairs = Session.open(session_file(work, sid), repair=False)
    assert repairs == [] and check_pairing(session.messages) == []
    assert not (work / "log.txt").exists()
    assert cli("approve", sid, "--script", "s.yaml").exit_code == 2  # nothing waits any more


SLOW = """\
- text: Running the slow command.
  tool_calls: [{name: shell, arguments: {command: "echo start >> runs.txt; sleep 5; echo end >> runs.txt"}}]
- text: All done.
"""


@pytest.mark.slow
def test_an_approved_call_killed_mid_run_never_runs_twice(work: Path, cli, arreio_env, arreio_cmd) -> None:
    (work / "slow.yaml").write_text(SLOW)
    paused = cli("run", "--goal", "GOAL.md", "--script", "slow.yaml", "--json")
    assert paused.exit_code == 3
    sid = events_of(paused.stdout)[0]["session_id"]
    cmd = arreio_cmd + ["approve", sid, "--script", "slow.yaml", "--json"]
    proc = subprocess.Popen(cmd, cwd=work, env=arreio_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:
            if json.loads(line)["type"] == "tool_start":
                break
        deadline = time.monotonic() + 10
        while not (work / "runs.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # the approved command is running right now
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    resumed = cli("run", "--resume", sid, "--script", "slow.yaml", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert (work / "runs.txt").read_text().count("start") == 1  # started once, never again
    session = json.loads(cli("sessions", "show", sid, "--json").stdout)
    results = [p for m in session["messages"] for p in m["parts"] if p["type"] == "tool_result"]
    assert [r["status"] for r in results] == ["interrupted"]


def test_a_new_instruction_while_a_call_waits_says_the_call_never_ran(work: Path, cli) -> None:
    sid, _ = pause(work, cli)
    (work / "NEW.md").write_text("# Do something else\n")
    Path(work / "s2.yaml").write_text(
        "- text: (the first turn, already in the session)\n- text: doing something else\n"
    )
    result = cli("run", "--resume", sid, "--goal", "NEW.md", "--script", "s2.yaml")
    assert result.exit_code == 0, result.output
    session, repairs = Session.open(session_file(work, sid), repair=False)
    results = [
        m.tool_result_part for m in session.messages if m.role == "tool" and m.tool_result_part.call_id == SHELL_CALL
    ]
    assert repairs == [] and len(results) == 1
    assert results[0].content.startswith("not run: shell was waiting for approval") and results[0].status == "error"
    assert not (work / "log.txt").exists()
    assert cli("approve", sid, "--script", "s.yaml").exit_code == 2  # nothing is waiting any more

"""Approvals a person can trust: Ctrl-C at the question cancels the run; every pause shows
what would run; the question starts on its own line after the streamed text; a decision is bound to
the call's arguments. The terminal cases run arreio in a real pseudo-terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing
from tests.conftest import ARREIO
from tests.terminal import Terminal

COMMAND = "echo ran >> log.txt"
SCRIPT = f"""\
- text: "I will append a line to the log with one shell command now."
  chunk_chars: 3
  tool_calls:
    - {{name: shell, arguments: {{command: "{COMMAND}"}}}}
- text: "All done."
"""


def session_of(work: Path, sid: str) -> Session:
    session, _ = Session.open(work / ".arreio" / "sessions" / f"{sid}.jsonl", repair=False)
    return session


def events_of(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def terminal(work: Path, arreio_env: dict, *args: str) -> Terminal:
    return Terminal([*ARREIO, *args], cwd=work, env=arreio_env)


@pytest.mark.slow
def test_ctrl_c_at_the_question_cancels_the_run_and_the_call_never_runs(work: Path, arreio_env, cli) -> None:
    (work / "s.yaml").write_text(SCRIPT)
    term = terminal(work, arreio_env, "run", "--goal", "GOAL.md", "--script", "s.yaml")
    term.expect(r"Run it\? \[y/N\] ")
    shown = term.plain
    # the streamed sentence is whole, then what would run, then the question on a line of its own
    assert "I will append a line to the log with one shell command now.\n" in shown
    assert f"$ {COMMAND}" in shown and "\nRun it? [y/N] " in shown
    term.type("\x03")
    assert term.wait() == 130, term.plain
    assert not (work / "log.txt").exists()
    run = next((work / ".arreio" / "runs").iterdir())
    report = json.loads((run / "report.json").read_text())
    assert report["verdict"] == "cancelled" and report["exit_code"] == 130
    sid = report["session_id"]
    session = session_of(work, sid)
    result = session.messages[-1].tool_result_part
    assert check_pairing(session.messages) == [] and "not run" in result.content
    assert "may or may not have taken effect" not in result.content  # it surely did not run
    resumed = cli("run", "--resume", sid, "--script", "s.yaml", "--json")  # the session goes on
    assert resumed.exit_code == 0, resumed.output
    assert events_of(resumed.stdout)[-1]["final_text"] == "All done."


@pytest.mark.slow
def test_yes_at_the_question_runs_the_call_once(work: Path, arreio_env) -> None:
    (work / "s.yaml").write_text(SCRIPT)
    term = terminal(work, arreio_env, "run", "--goal", "GOAL.md", "--script", "s.yaml")
    term.expect(r"Run it\? \[y/N\] ")
    term.type("y\r")
    assert term.wait() == 0, term.plain
    assert (work / "log.txt").read_text() == "ran\n" and "All done." in term.plain


def test_a_pause_says_what_would_run_everywhere(work: Path, cli) -> None:
    (work / "s.yaml").write_text(SCRIPT)
    live = cli("run", "--goal", "GOAL.md", "--script", "s.yaml")  # not a terminal: it pauses
    assert live.exit_code == 3
    assert "needs approval" in live.stdout and f"$ {COMMAND}" in live.stdout  # the live view
    stderr_line = [line for line in live.stderr.splitlines() if line.startswith("arreio: paused:")]
    assert len(stderr_line) == 1 and f"$ {COMMAND}" in stderr_line[0]  # the one line scripts read
    sid = live.stdout.split("session ", 1)[1].split()[0]
    shown = cli("sessions", "show", sid)
    top = shown.stdout.splitlines()[:4]
    assert any(f"waiting for approval: $ {COMMAND}" in line for line in top), shown.stdout
    as_json = cli("run", "--goal", "GOAL.md", "--script", "s.yaml", "--json")
    required = [e for e in events_of(as_json.stdout) if e["type"] == "approval_required"]
    assert required[0]["summary"] == f"$ {COMMAND}" and required[0]["reason"]


def test_a_write_pause_shows_the_path(work: Path, cli) -> None:
    (work / ".arreio").mkdir(exist_ok=True)
    (work / ".arreio" / "config.yaml").write_text("governance:\n  policy:\n    - {tool: write_file, action: ask}\n")
    (work / "s.yaml").write_text(
        "- tool_calls:\n    - {name: write_file, arguments: {path: docs/out.md, content: 'hello'}}\n- text: ok\n"
    )
    paused = cli("run", "--goal", "GOAL.md", "--script", "s.yaml")
    assert paused.exit_code == 3 and "write docs/out.md (5 chars)" in paused.stdout


def test_an_approval_is_bound_to_the_calls_arguments(work: Path, cli) -> None:
    (work / "s.yaml").write_text(SCRIPT)
    paused = cli("run", "--goal", "GOAL.md", "--script", "s.yaml", "--json")
    assert paused.exit_code == 3
    sid = events_of(paused.stdout)[0]["session_id"]
    path = work / ".arreio" / "sessions" / f"{sid}.jsonl"
    before = path.read_text()
    path.write_text(before.replace(COMMAND, "echo pwned >> log.txt"))  # the waiting call is not what was shown
    tampered = path.read_text()
    refused = cli("approve", sid, "--script", "s.yaml")
    assert refused.exit_code == 2 and "not the one that was paused" in refused.stderr
    assert path.read_text() == tampered and not (work / "log.txt").exists()  # nothing decided, nothing ran

"""A person approves exactly what they saw: a call is shown whole wherever it is put to a person — the
live view and the question of `arreio run` and `arreio chat` in a real terminal, the pause line,
`arreio sessions show`, `arreio approve` — with its lines kept (a command of two lines never reads
as one, and no line of it passes for arreio's own), and a call too long for anyone to read is not put
to a person at all. Before, the first 2,000 characters were shown and the rest approved unseen."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from arreio.engine.governance.approvals import ASK_LIMIT
from tests.chat.chatterm import ChatTerminal
from tests.conftest import ARREIO
from tests.terminal import Terminal

# The part that matters comes after 3,000 harmless characters.
LONG = "echo start; : " + "A" * 3000 + "; echo SEEN-THE-TAIL > tail.txt"
TWO_LINES = "echo one >> log.txt\necho SECOND-LINE >> log.txt"


def script(work: Path, command: str) -> str:
    replies = [
        {"text": "Running one command.", "tool_calls": [{"name": "shell", "arguments": {"command": command}}]},
        {"text": "All done."},
    ]
    (work / "s.yaml").write_text(json.dumps(replies))  # JSON is YAML: no quoting surprises
    return "s.yaml"


def events_of(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_arreio_run_in_a_terminal_shows_the_whole_command_before_it_asks(work: Path, arreio_env) -> None:
    term = Terminal([*ARREIO, "run", "--goal", "GOAL.md", "--script", script(work, LONG)], cwd=work, env=arreio_env)
    term.expect(r"Run it\? \[y/N\] ")
    assert 0 <= term.plain.find("SEEN-THE-TAIL > tail.txt") < term.plain.find("Run it?"), term.plain
    assert "more chars" not in term.plain
    term.type("n\r")
    assert term.wait() == 0, term.plain
    assert not (work / "tail.txt").exists()


@pytest.mark.slow
@pytest.mark.parametrize("piped", [False, True], ids=["terminal", "stdout piped"])
def test_a_chat_question_shows_every_line_of_the_call(work: Path, arreio_env, piped: bool) -> None:
    """In a chat the question shows the call (itself, when stdout goes to a pipe): every line, each
    behind a gutter — it was one flattened line, where `echo a⏎rm x` read as `echo a rm x`."""
    command = TWO_LINES + "; : " + "B" * 3000 + "; echo SEEN-THE-TAIL > tail.txt"
    term = ChatTerminal(work, arreio_env, "--script", script(work, command), stdout=subprocess.PIPE if piped else None)
    term.prompt()
    term.send("go")
    term.next(r"needs approval \(shell is a sensitive tool\): \n  │ \$ echo one >> log\.txt\n  │ echo SECOND-LINE")
    term.next(r"SEEN-THE-TAIL > tail\.txt\n")
    term.next(r"Run it\? \[y\]es")
    term.type("n\r")
    term.prompt()
    term.type("\x04")
    assert term.wait() == 0, term.plain
    assert not (work / "log.txt").exists() and not (work / "tail.txt").exists()


def test_a_pause_shows_the_whole_call_and_arreio_approve_runs_exactly_that(work: Path, cli) -> None:
    command = TWO_LINES + "; : " + "C" * 3000 + "; echo SEEN-THE-TAIL > tail.txt"
    paused = cli("run", "--goal", "GOAL.md", "--script", script(work, command))  # not a terminal: it pauses
    assert paused.exit_code == 3, paused.output
    assert "  │ echo SECOND-LINE >> log.txt; : CCC" in paused.stdout and "SEEN-THE-TAIL > tail.txt" in paused.stdout
    line = next(line for line in paused.stderr.splitlines() if line.startswith("arreio: paused:"))
    # one line a script can read, still faithful: the line break is written \n, and said to be one
    assert "$ echo one >> log.txt\\necho SECOND-LINE >> log.txt; : CCC" in line and "SEEN-THE-TAIL" in line
    assert "\\n is a line break" in line
    sid = paused.stdout.split("session ", 1)[1].split()[0]
    shown = cli("sessions", "show", sid)
    assert "  │ echo SECOND-LINE" in shown.stdout and "SEEN-THE-TAIL > tail.txt" in shown.stdout

    approved = cli("approve", sid, "--script", "s.yaml")
    assert approved.exit_code == 0, approved.output
    assert "  │ echo SECOND-LINE" in approved.stderr and "SEEN-THE-TAIL > tail.txt" in approved.stderr
    assert (work / "log.txt").read_text() == "one\nSECOND-LINE\n" and (work / "tail.txt").exists()


def test_a_call_too_long_to_read_is_not_put_to_a_person(work: Path, cli) -> None:
    command = "echo start; : " + "D" * ASK_LIMIT + "; echo late > tail.txt"
    result = cli("run", "--goal", "GOAL.md", "--script", script(work, command), "--json")
    assert result.exit_code == 0, result.output  # no pause: the model is told and goes on
    events = events_of(result.stdout)
    assert not [e for e in events if e["type"] == "approval_required"]
    ended = next(e for e in events if e["type"] == "tool_end")
    assert ended["preview"].startswith("not run: this shell call is 50,0"), ended
    assert not (work / "tail.txt").exists()
    yes = cli("run", "--goal", "GOAL.md", "--script", script(work, command), "--json", "--yes")
    assert yes.exit_code == 0 and (work / "tail.txt").exists()  # nobody is asked under --yes: it runs

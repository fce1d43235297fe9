"""`arreio chat` at a terminal with its stdout sent elsewhere (`> chat.log`, `| tee`): what the person at
the terminal still has to see there. Each test began as something a user trial saw go wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chat.chatterm import ChatTerminal

pytestmark = pytest.mark.slow


def test_an_approval_asked_with_stdout_redirected_says_what_would_run(tmp_path: Path, arreio_env) -> None:
    """`arreio chat > chat.log`: the question 'Run it? [y]es …' showed at the terminal alone; the line
    saying which command would run went into the file."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "s.yaml").write_text("""\
- tool_calls: [{name: shell, arguments: {command: "echo ran >> log.txt"}}]
- text: "Logged."
""")
    with (tmp_path / "chat.log").open("wb") as log:
        term = ChatTerminal(work, arreio_env, "--script", "s.yaml", stdout=log.fileno())
        term.prompt()
        term.send("log it")
        term.next(r"⏸ shell needs approval \(shell is a sensitive tool\): \$ echo ran >> log\.txt\n")
        term.next(r"Run it\? \[y\]es")
        term.type("y\r")
        term.prompt()
        term.type("\x04")
        assert term.wait() == 0, term.plain
    assert (work / "log.txt").read_text() == "ran\n"
    assert "Logged." in (tmp_path / "chat.log").read_text()

"""`arreio chat` at a terminal with its stdout sent elsewhere (`> chat.log`, `| tee`): what the person at
the terminal still has to see there. Each test pins something that once went wrong."""

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


def test_slash_commands_and_notes_answer_at_the_terminal_not_into_the_file(tmp_path: Path, arreio_env) -> None:
    """`arreio chat > chat.log`: /help, /cost, /sessions and the notes on a message (a missing @file)
    were written into the file; the person typing them saw nothing."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "s.yaml").write_text('- text: "The answer."\n')
    with (tmp_path / "chat.log").open("wb") as log:
        term = ChatTerminal(work, arreio_env, "--script", "s.yaml", stdout=log.fileno())
        term.prompt()
        term.send("/help")
        term.next(r"/exit — leave")
        term.prompt()
        term.send("look at @missing.md")
        term.next(r"@missing\.md: no such file here, sent as written")
        term.prompt()
        term.send("/sessions")
        term.next(r"id\s+created\s+model")
        term.prompt()
        term.send("/cost")
        term.next(r"1 turn · 1 step · 0 tool calls")
        term.prompt()
        term.type("\x04")
        term.next(r"session \S+ · continue with")
        assert term.wait() == 0, term.plain
    written = (tmp_path / "chat.log").read_text()
    assert "The answer." in written  # the turn went to the file
    assert "/exit — leave" not in written and "no such file" not in written and "1 turn ·" not in written
    assert "The answer." not in term.plain


def test_an_approval_asked_with_stdout_through_tee_says_what_would_run_once(tmp_path: Path, arreio_env) -> None:
    """`arreio chat | tee chat.log`: the '⏸ shell needs approval …' line showed twice at the terminal, once
    from the turn (through tee) and once from the question (on stderr, for a stdout that is a file)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "s.yaml").write_text("""\
- tool_calls: [{name: shell, arguments: {command: "echo ran >> log.txt"}}]
- text: "Logged."
""")
    term = ChatTerminal(work, arreio_env, "--script", "s.yaml", through=f"tee {tmp_path / 'chat.log'}")
    term.prompt()
    term.send("log it")
    term.next(r"⏸ shell needs approval \(shell is a sensitive tool\): \$ echo ran >> log\.txt\n")
    term.next(r"Run it\? \[y\]es")
    term.type("y\r")
    term.next(r"● shell\(command='echo ran >> log\.txt'\)")  # what tee shows
    term.next("Logged.")
    term.prompt()
    term.type("\x04")
    term.next(r"session \S+ · continue with")
    assert term.wait() == 0, term.plain
    assert term.plain.count("needs approval") == 1, term.plain
    assert (work / "log.txt").read_text() == "ran\n"
    logged = (tmp_path / "chat.log").read_text()
    assert "● shell(command='echo ran >> log.txt')" in logged and "Logged." in logged

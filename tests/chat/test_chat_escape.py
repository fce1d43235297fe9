"""Esc stops a chat turn, as in Claude Code and Codex; keys typed while a turn runs wait for the next
prompt (cli/chat/typeahead.py). In a real pseudo-terminal, with scripted replies.

Before: an Esc during a turn did nothing, then sat in the terminal's queue, where the next prompt read
it as the first half of Alt-<key> and the person's first keystroke vanished; a `y` typed ahead was
read as the answer to an approval question that came after it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from arreio.engine.session.healing import check_pairing
from tests.chat.test_chat_terminal import SESSION, chat, leave, session_of

pytestmark = pytest.mark.slow

SLOW_SHELL = """\
- text: "Waiting a while."
  tool_calls: [{name: shell, arguments: {command: "sleep 600 && echo late > late.txt"}}]
- text: "Back, and the session goes on."
"""


def test_esc_mid_turn_stops_it_and_what_was_typed_ahead_waits_at_the_prompt(work: Path, arreio_env) -> None:
    term = chat(work, arreio_env, SLOW_SHELL, "--yes")
    term.prompt()
    term.send("wait")
    first = term.next(r"arreio · offline · " + SESSION).group(1)
    term.next(r"● shell\(command='sleep 600")
    term.type("go on")  # typed ahead, then Esc
    time.sleep(0.2)
    term.type("\x1b")
    # stopped, not the 600 s sleep waited out (the wait is generous for a busy machine, and far short of it)
    term.next(r"\ninterrupted · 1 step · 1 tool call \(1 interrupted\) · ", timeout=90)
    term.next("turn cancelled — the session is intact; send a message to go on")
    term.next(r"› go on")  # the keys typed ahead, at the prompt as if typed there
    term.type("\r")
    assert term.next(r"arreio · offline · resuming (\S+)").group(1) == first
    term.next("Back, and the session goes on")
    assert leave(term) == first
    session = session_of(work, first)
    assert check_pairing(session.messages) == []
    assert [r.status for r in (m.tool_result_part for m in session.messages) if r is not None] == ["interrupted"]
    assert [m.text for m in session.messages if m.role == "user"][-1].endswith("go on")
    assert not (work / "late.txt").exists()


def test_an_arrow_key_or_alt_key_typed_mid_turn_does_not_stop_it(work: Path, arreio_env) -> None:
    """Their sequences start with the Esc byte; the terminal sends each in one write, and only an Esc
    with nothing after it stops the turn."""
    term = chat(
        work,
        arreio_env,
        """\
- text: "Waiting a moment."
  tool_calls: [{name: shell, arguments: {command: "sleep 2 && echo done > done.txt"}}]
- text: "Done waiting."
- text: "Second answer."
""",
        "--yes",
    )
    term.prompt()
    term.send("wait")
    term.next(r"● shell\(command='sleep 2")
    term.type("\x1b[A")  # Up
    term.type("\x1bb")  # Alt-b
    term.type("\x1b[D")  # Left
    term.next("Done waiting.", timeout=20)
    assert (work / "done.txt").read_text() == "done\n"
    assert "turn cancelled" not in term.plain
    term.prompt()
    time.sleep(0.3)  # the replayed Up brought back "wait"; clear it and ask again
    term.type("\x03")
    term.send("again")
    term.next("Second answer.")
    leave(term)


def test_a_key_typed_before_an_approval_question_does_not_answer_it(work: Path, arreio_env) -> None:
    term = chat(
        work,
        arreio_env,
        """\
- text: "Let me think about this carefully before I log anything at all, it matters."
  chunk_chars: 4
  delay_s: 0.1
  tool_calls: [{name: shell, arguments: {command: "echo ran >> log.txt"}}]
- text: "Not logged."
- text: "You said y."
""",
    )
    term.prompt()
    term.send("log it")
    term.next("Let me think")
    term.type("y\r")  # typed while the answer streams, before any question
    term.next(r"Run it\? \[y\]es \[n\]o \[a\]lways in this chat \[e\]xplain: ")
    time.sleep(0.5)
    assert not (work / "log.txt").exists()  # the question still waits: the "y" did not answer it
    term.type("n\r")
    term.next("Not logged.")
    term.next("You said y.")  # the line typed ahead went out as the next message, once the turn ended
    leave(term)
    assert not (work / "log.txt").exists()


def test_a_paste_during_a_turn_lands_whole_in_the_next_prompt(work: Path, arreio_env) -> None:
    """Regression: three lines pasted while the agent worked went out as three messages, three
    model calls. The turn asks the terminal for bracketed paste, as the prompt does."""
    term = chat(
        work,
        arreio_env,
        """\
- text: "Waiting a moment."
  tool_calls: [{name: shell, arguments: {command: "sleep 2"}}]
- text: "Done waiting."
- text: "One message came."
- text: "A second message came."
""",
        "--yes",
    )
    term.prompt()
    term.send("wait")
    term.next(r"● shell\(command='sleep 2")
    time.sleep(0.3)
    off = term.output.find("\x1b[?2004l")  # the prompt turns bracketed paste off as the message is sent
    assert off != -1 and term.output.find("\x1b[?2004h", off) != -1, "the turn did not ask for bracketed paste"
    term.type("\x1b[200~line one\nline two\nline three\x1b[201~")  # what the terminal sends for a paste
    term.next("Done waiting.", timeout=20)
    for line in ("› line one", "· line two", "· line three"):  # in the prompt, not sent
        term.next(line)
    time.sleep(0.5)
    assert "One message came." not in term.plain
    term.type("\r")
    term.next("One message came.")
    sid = leave(term)
    assert "A second message came." not in term.plain
    user = [m.text for m in session_of(work, sid).messages if m.role == "user"]
    assert user[-1].endswith("line one\nline two\nline three")

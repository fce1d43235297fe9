"""SIGTERM to `arreio chat` at a terminal: the process is asked to end (systemd, `docker stop`, `kill`),
so the chat leaves as Ctrl-D leaves — the terminal back in its own mode, the session named — and exits
130, wherever the signal lands: at the prompt, before or after a turn (the turn's own handler used to
reset SIGTERM to the default, which killed the chat with the terminal left in raw mode), mid-turn (the
turn is cancelled cleanly, then the chat leaves; it used to come back to its prompt and wait), and at
an approval's question (the call refused, never run). A real pseudo-terminal, a real signal."""

from __future__ import annotations

import signal
import termios
from pathlib import Path

import pytest

from arreio.engine.session.healing import check_pairing
from tests.chat.test_chat_terminal import LOG_IT, SESSION, chat, session_of
from tests.terminal import signal_another_thread

pytestmark = pytest.mark.slow

SLOW = """\
- text: "Working slowly on this long task, please wait while I think about it carefully."
  chunk_chars: 4
  delay_s: 1
- text: "Done."
"""


def _terminal_restored(term) -> bool:
    """The pty's line discipline is back in cooked mode with echo (what a shell needs after the chat)."""
    lflag = termios.tcgetattr(term.master)[3]
    return bool(lflag & termios.ICANON) and bool(lflag & termios.ECHO)


def _left(term) -> str:
    """The chat named its session on the way out and exited 130; returns the session id."""
    found = term.next(SESSION + r" · continue with `arreio chat --continue`", timeout=30)
    assert _terminal_restored(term), term.plain
    assert term.wait() == 130, term.plain
    return found.group(1)


def test_sigterm_at_a_fresh_prompt_leaves_with_130_and_the_terminal_restored(work: Path, arreio_env) -> None:
    term = chat(work, arreio_env, SLOW)
    term.prompt()
    term.proc.send_signal(signal.SIGTERM)
    term.next("no session was started", timeout=30)
    assert _terminal_restored(term), term.plain
    assert term.wait() == 130, term.plain


def test_sigterm_at_the_prompt_after_a_turn_leaves_with_130(work: Path, arreio_env) -> None:
    term = chat(work, arreio_env, "- text: 'Hello there.'\n")
    term.prompt()
    term.send("hi")
    term.next("Hello there")
    term.prompt()
    term.proc.send_signal(signal.SIGTERM)
    sid = _left(term)
    assert check_pairing(session_of(work, sid).messages) == []


def test_sigterm_mid_turn_cancels_the_turn_and_leaves(work: Path, arreio_env) -> None:
    term = chat(work, arreio_env, SLOW)
    term.prompt()
    term.send("go slow")
    term.next("Work")
    term.proc.send_signal(signal.SIGTERM)
    sid = _left(term)
    assert "turn cancelled" not in term.plain  # no "send a message to go on": nobody will
    session = session_of(work, sid)
    assert check_pairing(session.messages) == []
    assert session.runs[-1].get("verdict") == "cancelled"


@pytest.mark.parametrize("to", ["the process", "another thread"])
def test_sigterm_at_the_question_refuses_the_call_and_leaves(work: Path, arreio_env, to: str) -> None:
    """`another thread`: the kernel may give a signal sent to the process to any of its threads (the
    spinner's); the question must end all the same."""
    term = chat(work, arreio_env, LOG_IT)
    term.prompt()
    term.send("log it")
    term.next(r"Run it\? \[y\]es")
    if to == "the process":
        term.proc.send_signal(signal.SIGTERM)
    else:
        signal_another_thread(term.proc.pid, signal.SIGTERM)
    try:
        sid = _left(term)
    finally:
        if term.proc.poll() is None:  # the old way: still asking; answer so the chat can end
            term.type("n\r")
    assert not (work / "log.txt").exists()
    session = session_of(work, sid)
    assert check_pairing(session.messages) == []
    assert "not run" in next(m for m in session.messages if m.tool_result_part is not None).tool_result_part.content

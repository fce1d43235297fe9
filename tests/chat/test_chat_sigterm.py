"""SIGTERM at `arreio chat`'s inline approval: it stops the turn the way Ctrl-C there does (the call
refused, never run; the chat and its session go on), as SIGTERM mid-turn does. It used to wait
unseen behind the question's blocking read. A real pseudo-terminal, a real signal to the child."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from arreio.engine.session.healing import check_pairing
from tests.chat.test_chat_terminal import chat, leave, session_of

pytestmark = pytest.mark.slow


def test_sigterm_at_the_question_refuses_the_call_and_stops_only_the_turn(work: Path, arreio_env) -> None:
    term = chat(
        work,
        arreio_env,
        """\
- text: "I will log it."
  tool_calls: [{name: shell, arguments: {command: "echo ran >> log.txt"}}]
- text: "Understood, nothing was logged."
""",
    )
    term.prompt()
    term.send("log it")
    term.next(r"Run it\? \[y\]es")
    term.proc.send_signal(signal.SIGTERM)
    try:
        term.next("turn cancelled — the session is intact", timeout=15)
    finally:
        if "turn cancelled" not in term.plain:  # the old way: still asking; answer so the chat can end
            term.type("n\r")
    term.prompt()
    term.send("never mind")
    term.next("Understood, nothing was logged")
    sid = leave(term)
    assert not (work / "log.txt").exists()
    session = session_of(work, sid)
    assert check_pairing(session.messages) == []
    assert "not run" in next(m for m in session.messages if m.tool_result_part is not None).tool_result_part.content

"""`arreio chat` in a real pseudo-terminal against the real model: a message typed, the reply
streamed on the screen, the prompt back, Ctrl-D leaves with the session saved."""

from __future__ import annotations

import re

import pytest

from arreio.engine.session.file import Session
from tests.chat.chatterm import ChatTerminal
from tests.realmodel.conftest import Project

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(2400)]


def test_chat_in_a_pty_with_the_real_model(project: Project) -> None:
    project.config("tools_enabled: [list_dir, read_file]\n")  # a small schema: every token is paid on a CPU
    term = ChatTerminal(project.root, project.env, "--model", project.server.model, "--yes")
    try:
        term.prompt(timeout=120)
        term.send("What is the capital of France? Answer in one short sentence, without tools.")
        term.next(r"\d+ steps? · ", timeout=1200)  # the turn's closing line: the reply has streamed
        term.prompt(timeout=60)
        term.type("\x04")
        found = term.next(r"session (\d{8}-\d{6}-[0-9a-f]+)", timeout=60)
        assert term.wait() == 0, term.plain
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    session, _ = Session.open(project.root / ".arreio" / "sessions" / f"{found.group(1)}.jsonl", repair=False)
    session.close()
    answers = [m for m in session.messages if m.role == "assistant"]
    assert answers, term.plain
    text = answers[-1].text
    assert text.strip(), term.plain
    # what was kept is what the screen showed (its first words, past the terminal's wrapping)
    first = re.sub(r"\s+", " ", text.strip())[:20]
    assert first.split(" ")[0] in term.plain, term.plain

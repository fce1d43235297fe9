"""`arreio chat --continue` in a real pseudo-terminal: what the person coming back sees of the
conversation before the prompt (cli/chat/recap.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chat.chatterm import ChatTerminal
from tests.chat.test_chat_terminal import chat, leave

pytestmark = pytest.mark.slow


SCRIPT = """\
- text: "Answer one."
- text: "Looking."
  tool_calls: [{name: read_file, arguments: {path: "big.md"}}]
- text: "Answer two, after a look."
- text: "Answer three."
- text: "Answer four."
- text: "Answer five, after the summary."
"""


def four_messages(work: Path, env: dict, *commands: str) -> str:
    """A chat of four messages (the second reads a long file: a summary is shorter than the history,
    so `/compact` compacts), then `commands`; returns the session id."""
    (work / "big.md").write_text("".join(f"line {n}: some words to make the file long enough\n" for n in range(200)))
    term = chat(work, env, SCRIPT)
    for word in ("one", "two", "three", "four"):
        term.prompt()
        term.send(f"message {word}")
        term.next(rf"Answer {word}")
    for command in commands:
        term.prompt()
        term.send(command)
        term.next(r"context compacted")
    return leave(term)


def test_continue_shows_the_last_exchanges_not_only_the_last_one(work: Path, arreio_env) -> None:
    """`--continue` showed the last message and its answer alone: the three before were gone from view."""
    sid = four_messages(work, arreio_env)
    again = ChatTerminal(work, arreio_env, "--continue")
    again.next(rf"session {sid} · 10 messages · message one\n")
    again.next(
        r"… 1 earlier exchange\n"
        r"> message two\n  · 1 tool call\n  Answer two, after a look\.\n"
        r"> message three\n  Answer three\.\n"
        r"> message four\n  Answer four\.\n"
    )
    assert leave(again) == sid
    assert "message one" not in again.plain.split("10 messages · message one", 1)[1]  # the oldest one: counted only


def test_continue_after_a_compaction_says_a_summary_stands_for_what_came_before(work: Path, arreio_env) -> None:
    sid = four_messages(work, arreio_env, "/compact")
    again = ChatTerminal(work, arreio_env, "--continue")
    again.next(rf"session {sid} · 2 messages")  # the summary, and the last answer kept verbatim
    again.next(r"… the conversation so far is summarised\nlast answer: Answer four\.\n")
    again.prompt()
    again.send("message five")
    again.next("Answer five, after the summary")
    assert leave(again) == sid
    third = ChatTerminal(work, arreio_env, "--continue")
    third.next(r"… the conversation before is summarised\n> message five\n  Answer five, after the summary\.\n")
    assert leave(third) == sid
    assert "> message" not in again.plain and "message four" not in third.plain  # in the summary now

"""`arreio chat` end to end in a real pseudo-terminal, with scripted model replies (`--script`): the way a
person meets it — typed messages, inline approvals, Ctrl-C mid-turn, slash commands, Ctrl-D — and
what lands on disk (the files, the session) checked after."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arreio.engine.context.compaction import is_summary
from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing
from tests.chat.chatterm import ChatTerminal

pytestmark = pytest.mark.slow

SESSION = r"session (\d{8}-\d{6}-[0-9a-f]+)"


# A turn that asks to run one shell call; told no, it says so.
LOG_IT = """\
- text: "I will log it."
  tool_calls: [{name: shell, arguments: {command: "echo ran >> log.txt"}}]
- text: "Understood, nothing was logged."
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.md").write_text("original\n")
    return folder


def session_of(work: Path, sid: str) -> Session:
    session, _ = Session.open(work / ".arreio" / "sessions" / f"{sid}.jsonl", repair=False)
    session.close()
    return session


def chat(work: Path, env: dict, script: str, *args: str) -> ChatTerminal:
    (work / "s.yaml").write_text(script)
    return ChatTerminal(work, env, "--script", "s.yaml", *args)


def leave(term: ChatTerminal) -> str:
    """Ctrl-D at the prompt: the chat leaves with exit 0, naming the session; returns its id."""
    term.prompt()
    term.type("\x04")
    found = term.next(SESSION + r" · continue with `arreio chat --continue`")
    assert term.wait() == 0, term.plain
    return found.group(1)


def test_two_messages_with_tool_calls_and_an_approval_answered_always(work: Path, arreio_env) -> None:
    term = chat(
        work,
        arreio_env,
        """\
- text: "Let me look."
  tool_calls: [{name: list_dir, arguments: {path: "."}}]
- text: "There are **two** files here."
- text: "I will log it."
  tool_calls: [{name: shell, arguments: {command: "echo ran >> log.txt"}}]
- text: "Logged once."
- tool_calls: [{name: shell, arguments: {command: "echo ran >> log.txt"}}]
- text: "Logged twice."
""",
    )
    term.prompt()
    term.send("what is here?")
    term.next(r"● list_dir\(path='\.'\)")
    term.next(r"There are two files here\.")  # the answer as Markdown: no ** left
    term.next(r"2 steps · 1 tool call · [\d,]+ tokens · \$0 \(offline\) · 0% cached")
    term.prompt()
    term.send("log it")
    term.next(r"\$ echo ran >> log\.txt")
    term.next(r"Run it\? \[y\]es \[n\]o \[a\]lways in this chat \[e\]xplain: ")
    term.type("a\r")
    term.next(r"a\n● shell\(")  # the answer is echoed as typed, though a turn turns the echo off (chat/echo.py)
    term.next("Logged once")
    term.prompt()
    term.send("log it again")
    term.next("shell allowed for this chat")  # the same call is not asked about again
    term.next("Logged twice")
    sid = leave(term)
    assert term.plain.count("Run it?") == 1
    assert (work / "log.txt").read_text() == "ran\nran\n"
    runs = [r for r in session_of(work, sid).runs if r.get("event") == "end"]
    assert [r["verdict"] for r in runs] == ["success"] * 3  # three messages, three runs, one session


def test_ctrl_c_mid_turn_cancels_it_and_the_next_message_continues_the_same_session(work: Path, arreio_env) -> None:
    term = chat(
        work,
        arreio_env,
        """\
- text: "Looking first."
  tool_calls: [{name: list_dir, arguments: {path: "."}}]
- text: "Waiting a while."
  tool_calls: [{name: shell, arguments: {command: "sleep 30 && echo late > late.txt"}}]
- text: "Back, and the session goes on."
""",
        "--yes",
    )
    term.prompt()
    term.send("wait")
    first = term.next(r"arreio · offline · " + SESSION).group(1)
    term.next(r"● shell\(command='sleep 30")
    term.type("\x03")
    # What ran is counted, the interrupted call among them (the line said 'cancelled', then '1 tool call').
    term.next(r"\ninterrupted · 2 steps · 2 tool calls \(1 interrupted\) · ", timeout=20)
    term.next("turn cancelled — the session is intact; send a message to go on")
    term.prompt()
    term.send("/cost")
    term.next(r"1 turn · 2 steps · 2 tool calls")
    term.prompt()
    term.send("go on")
    assert term.next(r"arreio · offline · resuming (\S+)").group(1) == first
    term.next("Back, and the session goes on")
    assert leave(term) == first
    session = session_of(work, first)
    assert check_pairing(session.messages) == []
    results = [m.tool_result_part for m in session.messages if m.tool_result_part is not None]
    assert [r.status for r in results] == ["ok", "interrupted"]
    assert not (work / "late.txt").exists()  # the call was stopped, not left running
    assert [m.role for m in session.messages][-2:] == ["user", "assistant"]


def test_diff_undo_compact_and_cost(work: Path, arreio_env) -> None:
    # a long file read: the summary is shorter than the history it replaces, so /compact compacts
    (work / "big.md").write_text("".join(f"line {n}: some words to make the file long enough\n" for n in range(200)))
    term = chat(
        work,
        arreio_env,
        """\
- text: "Looking."
  tool_calls: [{name: read_file, arguments: {path: notes.md}}, {name: read_file, arguments: {path: big.md}}]
- text: "It says original."
- tool_calls: [{name: write_file, arguments: {path: notes.md, content: "overwritten\\n"}}]
- text: "Rewrote notes.md."
- text: "Still here after compacting."
""",
    )
    term.prompt()
    term.send("read the notes")
    term.next("It says original")
    term.prompt()
    term.send("rewrite them")
    term.next("Rewrote notes.md")
    term.next(r"changed 1 file \(1 modified\) · /diff shows them · /undo takes them back")
    assert (work / "notes.md").read_text() == "overwritten\n"
    term.prompt()
    term.send("/diff")
    term.next(r"\+overwritten")
    term.prompt()
    term.send("/undo")
    term.next(r"undone run run-\S+: 1 file put back as at checkpoint")
    term.prompt()
    assert (work / "notes.md").read_text() == "original\n"
    term.send("/compact")
    found = term.next(r"context compacted: ([\d,]+) → ([\d,]+) tokens \((\d+) messages summarised\)")
    assert int(found.group(3)) >= 4
    term.prompt()
    term.send("/cost")
    term.next(r"2 turns · 4 steps · 3 tool calls")
    term.next(r"tokens: [\d,]+ in / [\d,]+ out · cost: \$0 \(offline\)")
    term.next(r"stable prefix: \d+% of what 4 requests sent")
    term.prompt()
    term.send("are you there?")
    term.next("Still here after compacting")  # the scripted turn count survived the summary
    sid = leave(term)
    messages = session_of(work, sid).messages
    assert is_summary(messages[0])  # the history now starts with the summary
    told = [m.text for m in messages if m.role == "user" and "undid" in m.text]
    assert told, "the model is told its changes were taken back"


def test_ctrl_d_leaves_and_continue_picks_up_the_history(work: Path, arreio_env) -> None:
    script = """\
- text: "The first answer."
- text: "The second answer, same session."
"""
    (work / ".arreio").mkdir()
    (work / ".arreio" / "MEMORY.md").write_text("The user drinks tea.\n")
    term = chat(work, arreio_env, script)
    term.prompt()
    term.send("first")
    term.next("The first answer")
    sid = leave(term)
    (work / ".arreio" / "MEMORY.md").write_text("The user drinks coffee.\n")  # written between the chats
    again = ChatTerminal(work, arreio_env, "--continue")  # the session remembers its script
    again.next(rf"session {sid} · 2 messages")
    again.next(r"> first\n  The first answer\.\n")
    again.prompt()
    again.send("second")
    again.next(rf"resuming {sid}")
    again.next("The second answer, same session")
    again.prompt()
    again.type("\x03")  # twice on an empty prompt leaves too
    again.next(r"Ctrl-C again, or Ctrl-D, leaves")
    again.prompt()
    again.type("\x03")
    again.next(rf"session {sid} · continue with")
    assert again.wait() == 0, again.plain
    assert [m.text for m in session_of(work, sid).messages] == [
        "first",
        "The first answer.",
        "second",
        "The second answer, same session.",
    ]
    # The memory snapshot is the one frozen when the session started: every request carried the same system.
    session = session_of(work, sid)
    system = "\n".join(b.text for b in session.header.system)
    assert "tea" in system and "coffee" not in system
    digests = {r["system_digest"] for r in session.extra if r.get("type") == "request"}
    assert len(digests) == 1 and len([r for r in session.extra if r.get("type") == "request"]) == 2


def test_an_unknown_slash_command_gets_did_you_mean_and_help_lists_them(work: Path, arreio_env) -> None:
    term = chat(work, arreio_env, "- text: unused\n")
    term.prompt()
    term.send("/comapct")
    term.next(r"unknown command /comapct; did you mean /compact\?")
    term.prompt()
    term.send("/help")
    shown = term.next(r"/exit — leave")
    listed = re.findall(r"^\s+/(\w+)", term.plain[: shown.end()], re.MULTILINE)
    for name in (
        "help",
        "model",
        "compact",
        "cost",
        "diff",
        "undo",
        "memory",
        "skills",
        "sessions",
        "resume",
        "new",
        "clear",
        "exit",
    ):
        assert name in listed
    term.prompt()
    term.send("/exit")
    term.next("no session was started")
    assert term.wait() == 0
    assert not (work / ".arreio" / "sessions").exists()  # slash commands alone start no session
    history = (work / ".arreio" / "chat_history").read_text()
    assert "/comapct" in history and "/help" in history  # typed lines are kept for next time


def test_ctrl_c_at_the_question_refuses_the_call_and_stops_only_the_turn(work: Path, arreio_env) -> None:
    term = chat(work, arreio_env, LOG_IT)
    term.prompt()
    term.send("log it")
    term.next(r"Run it\? \[y\]es")
    term.type("e\r")  # explain: the full arguments, then the question again
    term.next(r'"command": "echo ran >> log\.txt"')
    term.next(r"Run it\? \[y\]es")
    term.type("\x03")
    term.next("turn cancelled — the session is intact")
    term.prompt()
    term.send("never mind")
    term.next("Understood, nothing was logged")
    sid = leave(term)
    assert not (work / "log.txt").exists()
    session = session_of(work, sid)
    assert check_pairing(session.messages) == []
    assert "not run" in next(m for m in session.messages if m.tool_result_part is not None).tool_result_part.content


def test_ctrl_c_mid_answer_is_not_echoed_into_the_preview(work: Path, arreio_env) -> None:
    """Regression: Ctrl-C while an answer streamed showed the partial answer twice — the terminal's
    `^C` echo wrapped after rich's full-width preview line and rich erased the wrong line. Keys are
    not echoed while a turn runs (an approval echoes its typed answer: the test above)."""
    term = chat(
        work,
        arreio_env,
        """\
- text: "Let me think about this very carefully before answering, because the question has several parts."
  chunk_chars: 4
  delay_s: 0.2
""",
    )
    term.prompt()
    term.send("hello")
    term.next("Let me think about")
    term.type("zq")  # typed ahead while the answer streams
    term.type("\x03")
    term.next("turn cancelled — the session is intact")
    shown = term.output
    assert "^C" not in shown and "zq" not in shown  # nothing the terminal echoed behind rich's back
    leave(term)  # (the keys typed ahead went with the Ctrl-C: the terminal drops its queue on a signal)


def test_model_in_a_scripted_chat_keeps_the_script(work: Path, arreio_env) -> None:
    """`/model NAME` in a `--script` chat dropped the script: the next message went to NAME (and failed
    for want of its API key); `/model offline/…` dropped it too (the offline model answered instead)."""
    env = {k: v for k, v in arreio_env.items() if not k.endswith("_API_KEY")}
    term = chat(
        work,
        env,
        """\
- text: "First."
- text: "Second."
- text: "Third."
""",
    )
    term.prompt()
    term.send("one")
    term.next("First")
    term.prompt()
    term.send("/model claude-sonnet-4-5")
    term.next(
        r"this chat plays the script s\.yaml: its replies come from the script, which only the offline "
        r"model plays; the model stays offline \(script\); `arreio chat --continue --model claude-sonnet-4-5`"
    )
    term.prompt()
    term.send("two")
    term.next(r"arreio · offline · resuming")
    term.next("Second")
    term.prompt()
    term.send("/model offline/other")
    term.next(r"model: offline/other from the next message on \(still playing the script s\.yaml\)")
    term.prompt()
    term.send("three")
    term.next(r"arreio · offline/other · resuming")
    term.next("Third")
    sid = leave(term)
    assert "needs an API key" not in term.plain
    assert [m.text for m in session_of(work, sid).messages if m.role == "assistant"] == ["First.", "Second.", "Third."]

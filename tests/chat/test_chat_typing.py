"""`arreio chat` in a real pseudo-terminal, as a person types at it: mentions of awkward names, answers
to an approval that are neither yes nor no, slash commands given the wrong arguments. Each test
pins something that once went wrong."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.chat.chatterm import ChatTerminal
from tests.chat.test_chat_terminal import SESSION, chat, leave, session_of
from tests.conftest import run_cli
from tests.terminal import Terminal

pytestmark = pytest.mark.slow


def user_messages(work: Path, sid: str) -> list[str]:
    return [m.text for m in session_of(work, sid).messages if m.role == "user"]


def test_a_name_with_spaces_is_attached_as_tab_completes_it_and_a_folder_is_said(work: Path, arreio_env) -> None:
    """Tab completed `@my notes.md` bare, which then attached nothing, silently (`@my` is no file); a
    folder that Tab completed as `@notes/` was said to be 'no such file here'."""
    (work / "my notes.md").write_text("buy milk\n")
    (work / "notes").mkdir()
    (work / "notes" / "a.md").write_text("a\n")
    term = chat(work, arreio_env, '- text: "Seen."\n- text: "Seen again."\n')
    term.prompt()
    # Each Tab only once what it completes shows: the line editor redraws only what changed, so on a busy
    # machine the completion can arrive as its own piece ("tes/" after the "@no" drawn before it).
    term.type("read @my")
    term.next("read @my")
    term.type("\t")  # completes the name, quoted: @"my notes.md"
    term.next('"my notes.md"')
    term.type(" and @no")
    term.next("and @no")
    term.type("\t")
    term.next("tes/")  # @notes/ (what was sent is checked below: "@notes/: a folder")
    term.type("\r")
    term.next(r"@notes/: a folder; nothing attached, sent as written")
    term.next(r"attached: my notes\.md")
    term.next("Seen.")
    term.prompt()
    term.send(r"and as a terminal pastes a dropped file: @my\ notes.md")
    term.next(r"attached: my notes\.md")
    term.next("Seen again.")
    sid = leave(term)
    first, second = user_messages(work, sid)
    assert "~~~ my notes.md (9 bytes)\nbuy milk\n~~~" in first
    assert "~~~ my notes.md (9 bytes)\nbuy milk\n~~~" in second


def test_an_answer_to_the_question_that_is_neither_yes_nor_no_asks_again(work: Path, arreio_env) -> None:
    """An answer that is none of y/n/a/e refused the call without a word (only y/yes ran it); one key
    answers, without Enter."""
    term = chat(
        work,
        arreio_env,
        """\
- tool_calls: [{name: shell, arguments: {command: "echo ran >> log.txt"}}]
- text: "Logged."
""",
    )
    term.prompt()
    term.send("log it")
    term.next(r"Run it\? \[y\]es")
    term.type("x")
    term.next(r"answer y, n, a or e \(Enter alone is no\)")
    term.next(r"Run it\? \[y\]es")
    term.type("y")  # no Enter: the key is the answer
    term.next("Logged.")
    leave(term)
    assert (work / "log.txt").read_text() == "ran\n"


def test_yes_typed_whole_with_enter_is_one_answer(work: Path, arreio_env) -> None:
    """With a key for an answer, "yes⏎" must not answer y and then send "es" as the next message."""
    term = chat(
        work,
        arreio_env,
        """\
- tool_calls: [{name: shell, arguments: {command: "echo ran >> log.txt"}}]
- text: "Logged."
- text: "A message came after."
""",
    )
    term.prompt()
    term.send("log it")
    term.next(r"Run it\? \[y\]es")
    term.type("yes\r")
    term.next("Logged.")
    sid = leave(term)
    assert (work / "log.txt").read_text() == "ran\n"
    assert user_messages(work, sid) == ["log it"]  # nothing of the answer went out as a message


def test_wrong_arguments_to_slash_commands_are_refused_and_a_path_is_a_message(work: Path, arreio_env) -> None:
    """`/model gpt-4o please` set the model to 'gpt-4o please' (every later message failed on it);
    `/diff --stat` and `/undo bogus` ignored the argument; `/etc/hosts what is this?` (a dropped file's
    path) was an unknown command, 'did you mean /cost?'."""
    (work / "hosts").write_text("127.0.0.1 localhost\n")
    term = chat(work, arreio_env, '- text: "That is a hosts file."\n')
    term.prompt()
    term.send("/model offline please")
    term.next(r"give one model name: /model NAME")
    term.prompt()
    term.send("/model")
    term.next(r"model: offline \(script\)")
    term.prompt()
    term.send("/diff --stat")
    term.next(r"/diff takes no argument \(usage: /diff — ")
    term.prompt()
    term.send("/undo bogus")
    term.next(r"/undo takes no argument but --force")
    term.prompt()
    term.send(f"{work}/hosts what is this?")
    term.next("That is a hosts file.")
    sid = leave(term)
    assert user_messages(work, sid) == [f"{work}/hosts what is this?"]
    assert "unknown command" not in term.plain


def test_a_long_line_wraps_without_the_new_line_mark(work: Path, arreio_env) -> None:
    """A line longer than the terminal wrapped with `· ` at the start of each screen row, the mark of
    a new line in the message (Esc-Enter): a wrap and a new line looked the same."""
    term = chat(work, arreio_env, '- text: "Read it."\n')
    term.prompt()
    term.type("w" * 150)
    term.next(r"\n\S? +w{20}")  # the wrap has been drawn
    term.type("\x1b\rsecond line")  # Esc-Enter: a real new line
    term.next("second line")
    shown = term.plain[term.plain.index("›") :]
    assert shown.count("·") == 1, shown  # the new line is marked, the wrap is not
    term.type("\r")
    term.next("Read it.")
    leave(term)


def _read_until(pipe: Any, pattern: str, timeout: float = 30.0) -> str:
    """What the child wrote to its stdout pipe, read until `pattern` shows (AssertionError if never)."""
    got, deadline = b"", time.monotonic() + timeout
    while not re.search(pattern, got.decode(errors="replace")):
        left = deadline - time.monotonic()
        assert left > 0, f"{pattern!r} never reached stdout; it holds:\n{got.decode(errors='replace')}"
        if select.select([pipe], [], [], min(left, 0.2))[0]:
            chunk = os.read(pipe.fileno(), 65536)
            assert chunk, f"stdout closed before {pattern!r}; it held:\n{got.decode(errors='replace')}"
            got += chunk
    return got.decode()


def test_with_stdout_piped_the_chat_prompts_on_the_terminal_and_the_turns_go_to_the_pipe(
    work: Path, arreio_env
) -> None:
    """`arreio chat | tee chat.log` was taken for a scripted chat: no prompt, the typed lines read up to
    Ctrl-D, every answer gone into the pipe."""
    (work / "s.yaml").write_text('- text: "The first answer."\n- text: "The second answer."\n')
    term = ChatTerminal(work, arreio_env, "--script", "s.yaml", stdout=subprocess.PIPE)
    term.next(r"arreio chat · new session")  # the banner and the prompt are on the terminal (stderr)
    term.prompt()
    term.send("first")
    log = _read_until(term.proc.stdout, r"1 step · 0 tool calls")
    assert "The first answer." in log and "›" not in log and "\x1b" not in log  # plain lines, no prompt
    # (on a busy machine the spinner may have drawn and erased itself on the prompt's line first)
    term.next(r"first\s*\n[^\n]*›")
    term.send("second")
    _read_until(term.proc.stdout, "The second answer.")
    term.next(r"second\s*\n[^\n]*›")  # the prompt after the turn (the line typed was drawn again as sent)
    term.type("\x04")
    term.next(SESSION + r" · continue with")  # the goodbye is said where the person looks
    assert term.wait() == 0, term.plain
    assert "The first answer" not in term.plain  # the answers went to the pipe only


def test_when_the_pipes_reader_leaves_the_chat_says_so_and_ends(work: Path, arreio_env) -> None:
    """`arreio chat | head -1`: after head took its line, the chat ends with a word, exit 0 (it was a
    scripted chat reading the terminal, with no prompt)."""
    (work / "s.yaml").write_text('- text: "The answer, late."\n  delay_s: 1\n')
    term = ChatTerminal(work, arreio_env, "--script", "s.yaml", stdout=subprocess.PIPE)
    term.prompt()
    term.send("first")
    _read_until(term.proc.stdout, r"arreio · offline · session")
    term.proc.stdout.close()  # as head -1 does after its line
    term.next(r"stdout was closed \(its reader left\); the chat ends here")
    term.next(SESSION + r" · continue with")
    assert term.wait() == 0, term.plain


def test_with_stdout_closed_at_a_terminal_the_chat_refuses_to_start(work: Path, arreio_env) -> None:
    """`arreio chat >&-` took messages at the prompt and showed nothing of the answers."""
    env = {**arreio_env, "PROMPT_TOOLKIT_NO_CPR": "1"}
    closed = Terminal(
        ["sh", "-c", 'exec "$0" -m arreio.cli.launch chat --offline >&-', sys.executable], cwd=work, env=env
    )
    closed.expect(r"stdout is closed, so the chat's answers would go nowhere")
    assert closed.wait() == 2


def test_a_burst_of_ctrl_c_that_stops_a_turn_does_not_leave_the_chat(work: Path, arreio_env) -> None:
    """Ctrl-C pressed four times 0.15 s apart while a tool ran stopped the turn, and the presses that
    came after the prompt was back (two, on an empty prompt) left the chat."""
    term = chat(
        work,
        arreio_env,
        """\
- text: "Sleeping."
  tool_calls: [{name: shell, arguments: {command: "sleep 30"}}]
- text: "Still here."
""",
        "--yes",
    )
    term.prompt()
    term.send("sleep")
    term.next(r"● shell\(command='sleep 30'\)")
    time.sleep(0.5)  # the call runs (a Ctrl-C as the sandbox starts can leave it running: the report's engine race)
    term.type("\x03")
    term.next("turn cancelled — the session is intact")
    term.next("›")
    term.type("\x03")  # the rest of the burst, as the prompt comes back
    time.sleep(0.1)
    term.type("\x03")
    time.sleep(1)
    assert term.proc.poll() is None, term.plain  # still chatting
    term.send("go on")
    term.next("Still here.")
    leave(term)


def test_continue_shows_the_answer_to_the_last_message_not_an_older_one(work: Path, arreio_env) -> None:
    """The last message's turn failed (the script ran out); `--continue` showed it with the answer of
    the turn before as its 'last answer'."""
    (work / "notes.md").write_text("secret ingredient\n")
    term = chat(work, arreio_env, '- text: "The only answer."\n')
    term.prompt()
    term.send("first")
    term.next("The only answer.")
    term.prompt()
    term.send("second, with @notes.md")
    term.next("failed: the model call failed: the offline script ran out")
    sid = leave(term)
    again = ChatTerminal(work, arreio_env, "--continue")
    again.next(rf"session {sid} · 3 messages")
    again.next(r"> first\n  The only answer\.\n")
    # as typed (the attached file is not shown), and answered by nothing (not by the answer before)
    again.next(r"> second, with @notes\.md\n  \(no answer: that turn ended without one\)\n")
    leave(again)
    assert again.plain.count("The only answer") == 1 and "secret ingredient" not in again.plain


def test_a_command_followed_by_a_new_line_is_that_command(work: Path, arreio_env) -> None:
    """`/new`, Esc-Enter, `more` was 'unknown command /new<newline>more; did you mean /new?' (only a
    space ended the name)."""
    term = chat(work, arreio_env, '- text: "unused"\n')
    term.prompt()
    term.type("/model\x1b\roffline\r")
    term.next(r"model: offline from the next message on")
    term.prompt()
    term.send("/exit")
    term.next("no session was started")
    assert term.wait() == 0
    assert "unknown command" not in term.plain


def test_ctrl_z_at_the_prompt_does_not_type_into_the_message(work: Path, arreio_env) -> None:
    """Ctrl-Z at the prompt put a literal ^Z (0x1a) into the message; it suspends the chat, as in a
    shell (here, a session leader with no shell to return to, the kernel discards the stop)."""
    term = chat(work, arreio_env, '- text: "Got it."\n')
    term.prompt()
    term.type("ab\x1a")
    time.sleep(0.5)
    term.type("cd\r")
    term.next("Got it.")
    sid = leave(term)
    assert user_messages(work, sid) == ["abcd"]


def test_resuming_a_session_paused_at_an_approval_says_what_waits(work: Path, arreio_env) -> None:
    """A piped chat paused at an approval (exit 3); `arreio chat --continue` showed the last exchange
    only, and the next message dropped the waiting call without a word."""
    (work / "s.yaml").write_text("""\
- text: "Logging."
  tool_calls: [{name: shell, arguments: {command: "echo p >> log.txt"}}]
- text: "Went on."
""")
    piped = run_cli(work, arreio_env, "chat", "--script", "s.yaml", input="log it\n")
    assert piped.returncode == 3, piped.stderr
    again = ChatTerminal(work, arreio_env, "--continue")
    again.next(r"waiting for approval: \$ echo p >> log\.txt")
    found = again.next(
        r"`arreio approve (\S+)` runs it \(`--deny` refuses it\); a message sent here goes on without it"
    )
    sid = leave(again)
    assert found.group(1) == sid


def test_a_call_stopped_by_ctrl_c_says_so_under_its_line(work: Path, arreio_env) -> None:
    """Ctrl-C while a tool ran left its `● shell(…)` line with no result under it: had it run?"""
    term = chat(
        work,
        arreio_env,
        """\
- text: "Sleeping."
  tool_calls: [{name: shell, arguments: {command: "sleep 30"}}]
""",
        "--yes",
    )
    term.prompt()
    term.send("sleep")
    term.next(r"● shell\(command='sleep 30'\)")
    time.sleep(0.5)  # the call runs (a Ctrl-C as the sandbox starts can leave it running: the report's engine race)
    term.type("\x03")
    term.next(r"[\r\n]  ✗ shell: interrupted, stopped with the turn\n")  # (after the spinner is erased)
    term.next("turn cancelled — the session is intact")
    leave(term)


def test_a_piped_message_that_cannot_start_says_why_on_stderr(work: Path, arreio_env) -> None:
    """`echo again | arreio chat --continue` on a session whose --script is gone printed 'error: …' on
    stdout, among the answers a script reads; `arreio run` says it on stderr."""
    (work / "s.yaml").write_text('- text: "First."\n')
    first = run_cli(work, arreio_env, "chat", "--script", "s.yaml", input="hi\n")
    assert first.returncode == 0, first.stderr
    (work / "s.yaml").unlink()
    again = run_cli(work, arreio_env, "chat", "--continue", input="again\n")
    assert again.returncode == 2
    assert re.search(
        r"^arreio: error: session \S+ was run with --script .*s\.yaml, which no longer exists",
        again.stderr,
        re.MULTILINE,
    ), again.stderr
    assert "error" not in again.stdout


def test_undo_in_a_new_chat_does_not_take_back_another_sessions_changes(work: Path, arreio_env) -> None:
    """/undo in a chat that had sent nothing undid the folder's latest run — another session's — and
    deleted the file it had written; /diff showed that run. They act on this session's last run only."""
    (work / "s.yaml").write_text("""\
- tool_calls: [{name: write_file, arguments: {path: kept.md, content: "kept\\n"}}]
- text: "Wrote kept.md."
""")
    other = run_cli(work, arreio_env, "chat", "--script", "s.yaml", input="write it\n")
    assert other.returncode == 0, other.stderr
    assert (work / "kept.md").read_text() == "kept\n"
    term = ChatTerminal(work, arreio_env, "--offline")
    term.prompt()
    term.send("/undo")
    term.next("nothing to undo: no message has been sent in this session yet")
    term.prompt()
    term.send("/diff")
    term.next("nothing to show: no message has been sent in this session yet")
    term.prompt()
    term.send("/exit")
    assert term.wait() == 0
    assert (work / "kept.md").read_text() == "kept\n"
    again = ChatTerminal(work, arreio_env, "--continue")  # the session that wrote it: its last run
    again.prompt()
    again.send("/diff")
    again.next(r"\+kept")
    leave(again)


def test_help_of_a_slash_command_names_the_slash_command(work: Path, arreio_env) -> None:
    """`/memory --help` said 'Usage: arreio show [OPTIONS]', a command that exists nowhere."""
    term = chat(work, arreio_env, '- text: "unused"\n')
    term.prompt()
    term.send("/memory --help")
    term.next(r"Usage: /memory \[OPTIONS\]")
    term.prompt()
    term.send("/sessions --help")
    term.next(r"Usage: /sessions \[OPTIONS\]")
    term.prompt()
    term.send("/exit")
    assert term.wait() == 0
    assert "arreio show" not in term.plain and "arreio list" not in term.plain

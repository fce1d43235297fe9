"""`arreio chat` with stdin piped (not a terminal), through a real subprocess: each line (or block) is a
message run in turn on one session and printed as `arreio run` prints; slash commands work; the exit
code is the last failing message's. And the figure the issue asks for: the stable prefix share over a
10-turn scripted chat (each message one run; the cache does not care)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from arreio.cli.chat.stats import prefix_share
from arreio.engine.session.file import Session
from tests.conftest import run_cli

pytestmark = pytest.mark.slow


def chat(work: Path, env: dict, stdin: str, *args: str) -> subprocess.CompletedProcess:
    return run_cli(work, env, "chat", *args, input=stdin)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.md").write_text("one note\n")
    return folder


def session_id(out: str) -> str:
    return re.search(r"arreio · offline · session (\S+)", out).group(1)


def messages_of(work: Path, sid: str) -> list:
    session, _ = Session.open(work / ".arreio" / "sessions" / f"{sid}.jsonl", repair=False)
    session.close()
    return session.messages


def test_each_line_is_a_message_on_one_session_printed_as_run_prints(work, arreio_env) -> None:
    (work / "s.yaml").write_text("""\
- tool_calls: [{name: list_dir, arguments: {path: "."}}]
- text: "Two files."
- tool_calls: [{name: read_file, arguments: {path: notes.md}}]
- text: "It holds one note."
""")
    done = chat(work, arreio_env, "What is here?\nRead the notes\n/cost\n/cots\n", "--script", "s.yaml")
    assert done.returncode == 2, done.stderr  # the unknown /cots: a script's typo is not a success
    sid = session_id(done.stdout)
    assert f"arreio · offline · resuming {sid}" in done.stdout  # the second message resumed the first's session
    assert done.stdout.count("success · 2 steps · 1 tool call") == 2  # `arreio run`'s end line, per message
    assert "● list_dir(path='.')" in done.stdout and "It holds one note." in done.stdout
    assert "2 turns · 4 steps · 2 tool calls" in done.stdout  # /cost
    assert "unknown command /cots; did you mean /cost?" in done.stdout
    assert "\x1b[" not in done.stdout  # a pipe gets plain lines
    assert f"session {sid} · continue with `arreio chat --continue`" in done.stderr
    assert [m.text for m in messages_of(work, sid) if m.role == "user"] == ["What is here?", "Read the notes"]


def test_blocks_between_blank_lines_are_messages(work, arreio_env) -> None:
    (work / "s.yaml").write_text("- text: First.\n- text: Second.\n")
    done = chat(work, arreio_env, "Line one\nline two of the same message\n\nAnother message\n", "--script", "s.yaml")
    assert done.returncode == 0, done.stderr
    users = [m.text for m in messages_of(work, session_id(done.stdout)) if m.role == "user"]
    assert users == ["Line one\nline two of the same message", "Another message"]


def test_a_sensitive_call_pauses_its_turn_and_the_next_message_goes_on(work, arreio_env) -> None:
    (work / "s.yaml").write_text("""\
- tool_calls: [{name: shell, arguments: {command: "echo ran >> log.txt"}}]
- text: "Fine, I will not run it."
""")
    done = chat(work, arreio_env, "Log it\nNever mind\n", "--script", "s.yaml")
    assert done.returncode == 3, done.stderr  # the last failing message's code: paused for approval
    assert re.search(r"^arreio: paused: shell needs approval .*\$ echo ran >> log\.txt", done.stderr, re.MULTILINE)
    assert "Fine, I will not run it." in done.stdout
    assert not (work / "log.txt").exists()
    with_yes = chat(work, arreio_env, "Log it\n", "--script", "s.yaml", "--yes")
    assert with_yes.returncode == 0 and (work / "log.txt").read_text() == "ran\n"


def test_new_resume_and_model_from_another_folder(work, arreio_env, tmp_path) -> None:
    (work / "s.yaml").write_text("- text: One.\n- text: Two.\n")
    first = chat(work, arreio_env, "hello\n", "--script", "s.yaml")
    sid = session_id(first.stdout)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    lines = f"/model\n/new\n/resume {sid[:-2]}\n/model nosuch-model-x\nagain\n"
    done = run_cli(elsewhere, arreio_env, "chat", "-C", str(work), input=lines)
    assert done.returncode == 0, done.stderr
    assert "model: offline" in done.stdout
    assert "new session: the next message starts it" in done.stdout
    assert f"session {sid} · 2 messages" in done.stdout  # /resume by a prefix shows where it stands
    assert "unknown model 'nosuch-model-x'" in done.stdout  # refused: the chat keeps its model
    assert f"resuming {sid}" in done.stdout and "Two." in done.stdout  # the session's own script went on
    assert not (elsewhere / ".arreio").exists()  # -C: everything happened in the work folder


def test_learn_runs_the_gated_pass_after_each_turn(work, arreio_env) -> None:
    done = chat(work, arreio_env, "Read notes.md\nList the files\n", "--offline", "--learn")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("learning gate:") == 2  # once per turn whose gates passed, as `run --learn`


def test_bad_input_is_one_line_and_exit_2(work, arreio_env) -> None:
    empty = chat(work, arreio_env, "\n\n")
    assert empty.returncode == 2 and empty.stderr.count("\n") == 1 and "sent no message" in empty.stderr
    both = chat(work, arreio_env, "hi\n", "--offline", "--model", "openai/gpt-4o")
    assert both.returncode == 2 and "disagree" in both.stderr and "Traceback" not in both.stderr
    nothing = chat(work, arreio_env, "hi\n", "--continue")
    assert nothing.returncode == 2 and "no session to continue" in nothing.stderr


def test_a_ten_turn_chat_keeps_the_prefix_stable(work, arreio_env) -> None:
    """Every message is its own run, yet each request repeats the one before it up to the new turn:
    the system prompt (memory snapshot included) is frozen in the session header at its start."""
    replies = []
    for i in range(10):
        replies.append(f'- tool_calls: [{{name: read_file, arguments: {{path: notes.md}}}}]\n  text: "Turn {i}."\n')
        replies.append(f'- text: "Answer {i}: the notes hold one note."\n')
    (work / "s.yaml").write_text("".join(replies))
    lines = "".join(f"Question {i}: what do the notes say?\n" for i in range(10)) + "/cost\n"
    done = chat(work, arreio_env, lines, "--script", "s.yaml")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("success · 2 steps") == 10
    sid = session_id(done.stdout)
    share, measured = prefix_share(work / ".arreio" / "sessions" / f"{sid}.jsonl")
    assert measured == 20
    shown = int(re.search(r"stable prefix: (\d+)% of what 20 requests sent", done.stdout).group(1))
    assert shown == round(share * 100)
    # The first request repeats nothing; every later one repeats all but the newest turn.
    assert share > 0.85, share
    print(f"stable prefix share over a 10-turn scripted chat: {share:.1%} of {measured} requests")


def test_help_never_loads_the_line_editor(tmp_path: Path) -> None:
    """prompt_toolkit is imported by an interactive chat only: `arreio --help`, `arreio chat --help` and a
    piped chat do without it."""
    import json
    import sys

    probe = """
import io, json, sys
from typer.testing import CliRunner
from arreio.cli.app import app
for args, stdin in [(["--help"], None), (["chat", "--help"], None), (["chat", "--offline"], "hello\\n")]:
    CliRunner().invoke(app, args, input=stdin)
print(json.dumps(sorted(m for m in ("prompt_toolkit", "anthropic", "openai", "litellm") if m in sys.modules)))
print("ran" if "arreio.engine.run.pipeline" in sys.modules else "did not run")
"""
    out = subprocess.run(
        [sys.executable, "-c", probe], check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    *_, loaded, ran = out.stdout.strip().splitlines()
    assert json.loads(loaded) == [] and ran == "ran"  # the piped chat did run its message


def test_offline_and_script_together_are_accepted_as_in_run(work: Path, arreio_env) -> None:
    """`--script` plays the offline model, so `--offline` agrees with it: `arreio run` took the pair,
    `arreio chat` refused it. A script with another --model is still refused."""
    (work / "s.yaml").write_text('- text: "Scripted hello."\n')
    done = chat(work, arreio_env, "hi\n", "--offline", "--script", "s.yaml")
    assert done.returncode == 0, done.stderr
    assert "Scripted hello." in done.stdout
    refused = chat(work, arreio_env, "hi\n", "--model", "gpt-4o", "--script", "s.yaml")
    assert refused.returncode == 2 and "cannot be combined with --model gpt-4o" in refused.stderr


def test_after_compact_and_undo_the_offline_model_does_not_carry_out_the_old_goal_again(work, arreio_env) -> None:
    """Regression: after /compact, the goal the summary kept was read as still to do, and a file
    the user had just undone came back with the next message ('thanks, that is all')."""
    (work / "notes.md").write_text("# N\nhello\n")
    done = chat(
        work,
        arreio_env,
        "Read notes.md and write a summary to o.md\n/compact\n/undo\nthanks, that is all\n",
        "--offline",
    )
    assert done.returncode == 0, done.stderr
    assert "created o.md" in done.stdout  # the first message wrote it; /undo took it back
    assert not (work / "o.md").exists()
    assert "could not write o.md" not in done.stdout

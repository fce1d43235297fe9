"""Small things a new user tripped on in `arreio chat`, each through a real process (stdin piped)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from arreio.engine.core.summary import SUMMARY_MARKER
from arreio.engine.session.file import Session
from tests.conftest import run_cli


def chat(work: Path, env: dict, stdin: str, *args: str) -> subprocess.CompletedProcess:
    return run_cli(work, env, "chat", *args, input=stdin)


def messages(work: Path) -> list:
    (path,) = [p for p in (work / ".arreio" / "sessions").glob("*.jsonl")]
    session, _ = Session.open(path, repair=False)
    session.close()
    return session.messages


def test_compact_never_replaces_a_history_with_a_longer_summary(work: Path, arreio_env: dict) -> None:
    done = chat(work, arreio_env, "hi\nhello again\n/compact\n", "--offline")
    assert done.returncode == 0, done.stderr
    assert "not compacted: a summary of the" in done.stdout and "the conversation stays as it is" in done.stdout
    assert "context compacted" not in done.stdout
    kept = messages(work)
    assert kept[0].text == "hi" and not any(m.text.startswith(SUMMARY_MARKER) for m in kept)


def test_undo_and_diff_after_a_read_only_turn_say_it_changed_no_files(work: Path, arreio_env: dict) -> None:
    (work / "a.md").write_text("hi\n")
    done = chat(work, arreio_env, "Read a.md\n/undo\n/diff\n", "--offline")
    assert done.returncode == 0, done.stderr
    assert "nothing to undo: the last turn changed no files" in done.stdout
    assert "nothing to show: the last turn changed no files" in done.stdout
    assert "no checkpoints for run" not in done.stdout + done.stderr


def test_a_scripted_chat_exits_2_on_an_unknown_slash_command(work: Path, arreio_env: dict) -> None:
    done = chat(work, arreio_env, "hi\n/comapct\n/cost\n", "--offline")
    assert done.returncode == 2, done.stderr
    assert "unknown command /comapct; did you mean /compact?" in done.stdout
    assert "arreio: error: /comapct: refused (said above)" in done.stderr
    assert "1 turn" in done.stdout  # the commands after it still ran
    assert chat(work, arreio_env, "hi\n/cost\n", "--offline").returncode == 0


def test_compact_counts_its_summary_in_the_chat_totals(work: Path, arreio_env: dict) -> None:
    """/compact asks the model for the summary (the offline model answers it, with its usage): /cost
    counts those tokens, as a run counts its own compaction's."""
    words = ("alpha", "beta", "gamma", "delta", "river", "stone", "cloud", "paper")
    (work / "notes.md").write_text("\n".join(" ".join(words[(i * 7 + j) % 8] for j in range(12)) for i in range(400)))
    done = chat(work, arreio_env, "Read notes.md and write a summary to o.md\n/cost\n/compact\n/cost\n", "--offline")
    assert done.returncode == 0, done.stderr
    assert "context compacted" in done.stdout
    before, after = (
        tuple(int(n.replace(",", "")) for n in found)
        for found in re.findall(r"tokens: ([\d,]+) in / ([\d,]+) out", done.stdout)
    )
    assert after[0] > before[0] and after[1] > before[1]
    assert "· 1 compaction" in done.stdout
    (archive,) = (work / ".arreio" / "sessions").glob("*/compacted/001.jsonl")  # the replaced head, kept
    assert "read_file" in archive.read_text()

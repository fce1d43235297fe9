"""Text UTF-8 cannot write never reaches a writer: a file name that is not UTF-8 in a tool's output,
a lone or split surrogate in a model's stream. Both crashed the run with "internal error" (a user
trial); pure functions first, then real runs through the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

from arreio.engine.core.surrogates import escaped, repaired, repaired_value
from arreio.engine.session.file import Session
from tests.conftest import run_cli as arreio


def test_tool_output_keeps_a_bad_byte_readable() -> None:
    assert escaped("n\udcffame.md") == "n\\xffame.md"
    assert escaped("a\ud800b") == "a\\ud800b"  # not from a byte: its code point
    honest = "déjà vu ✓ 漢字 😀\ttab"
    assert escaped(honest) is honest  # the fast path: the same object, no copy


def test_model_text_joins_a_split_pair_and_replaces_a_lone_half() -> None:
    assert repaired("a" + "\ud83d" + "\ude00" + "b") == "a😀b"
    assert repaired("lone \ud83d end") == "lone \ufffd end"
    assert repaired("\ude00") == "\ufffd"
    honest = "plain ✓"
    assert repaired(honest) is honest


def test_arguments_are_repaired_all_the_way_down() -> None:
    arguments = {"path": "n\udcffame.md", "edits": [{"old": "x\ud800", "new": "ok"}], "k": 3}
    assert repaired_value(arguments) == {"path": "n\ufffdame.md", "edits": [{"old": "x\ufffd", "new": "ok"}], "k": 3}
    clean = {"path": "a.md", "lines": [1, 2], "nested": {"q": "✓"}}
    assert repaired_value(clean) is clean


def session_of(work: Path) -> Session:
    path = next((work / ".arreio" / "sessions").glob("*.jsonl"))
    session, repairs = Session.open(path, repair=False)
    session.close()
    assert repairs == []
    return session


def test_listing_a_file_whose_name_is_not_utf8(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "ok.md").write_text("fine\n")
    open(os.path.join(os.fsencode(work), b"n\xffame.md"), "wb").close()
    done = arreio(work, arreio_env, "run", "list the files", "--offline")
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr
    listing = next(m.tool_result_part.content for m in session_of(work).messages if m.tool_result_part is not None)
    assert "n\\xffame.md" in listing and "ok.md" in listing


def test_a_stream_with_surrogates_is_saved_and_answered(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    # JSON escapes give Python the halves as they come: a pair cut across two chunks, a lone half
    script = (
        '{"replies": [{"text": "a\\ud83d\\ude00b", "chunk_chars": 2, "tool_calls": [{"name": "read_file", '
        '"arguments": {"path": "x\\ud800.md"}}]}, {"text": "done \\udcff"}]}'
    )
    (work / "s.json").write_text(script)
    done = arreio(work, arreio_env, "run", "x", "--script", "s.json", "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["final_text"] == "done \ufffd"
    texts = [m.text for m in session_of(work).messages if m.role == "assistant"]
    assert texts[0] == "a😀b"
    call = next(m.tool_calls[0] for m in session_of(work).messages if m.tool_calls)
    assert call.arguments == {"path": "x\ufffd.md"}

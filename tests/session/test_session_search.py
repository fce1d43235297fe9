"""Full-text search over saved sessions (engine/session/search.py): real SQLite FTS5 files."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.session import search as search_mod
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.session.search import SessionIndex, excerpt


def make(sessions: Path, sid: str, cwd: Path, *messages: Message, at: str = "2026-12-01T10:00:00.000Z") -> Session:
    header = SessionHeader(id=sid, created_at=at, cwd=str(cwd), model="offline", title=f"title {sid}")
    s = Session.create(sessions, header)
    s.mark_run(f"run-{sid}", "start", at)
    s.append_many(list(messages))
    return s


def index(tmp_path: Path) -> SessionIndex:
    return SessionIndex(tmp_path / "search.sqlite", tmp_path / "sessions")


def hits(ix: SessionIndex, text: str, **kw) -> list[tuple[str, str, str]]:
    return [(h.session_id, h.role, h.line) for h in ix.search(text, **kw)]


def test_words_roles_and_newest_first(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    make(
        sessions,
        "s1",
        tmp_path,
        Message.user("deploy the billing service"),
        Message.assistant(
            [
                TextPart(text="I will deploy it.\nFirst the billing check."),
                ToolCallPart(id="c", name="shell", arguments={"command": "make deploy"}),
            ],
            model="offline",
        ),
        Message.tool_result(ToolResultPart(call_id="c", name="shell", content="deploy: ok\nbilling: 3 rows")),
        at="2026-12-01T10:00:00.000Z",
    ).close()
    make(sessions, "s2", tmp_path, Message.user("billing report please"), at="2026-12-02T10:00:00.000Z").close()
    ix = index(tmp_path)
    assert hits(ix, "BILLING")[0] == ("s2", "user", "billing report please")  # newest first, any case
    assert [h[0] for h in hits(ix, "billing")] == ["s2", "s1", "s1", "s1"]
    assert hits(ix, "deploy billing") == [("s1", "user", "deploy the billing service")]  # every word, one line
    assert hits(ix, "billing", role="tool") == [("s1", "tool", "billing: 3 rows")]
    assert hits(ix, "make deploy", role="tool") == [("s1", "tool", 'shell {"command": "make deploy"}')]
    assert hits(ix, "first the", role="assistant") == [("s1", "assistant", "First the billing check.")]
    assert hits(ix, "nowhere to be found") == []


def test_japanese_and_chinese_including_two_character_words(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    make(
        sessions,
        "ja",
        tmp_path,
        Message.user("東京の天気予報を調べてください"),
        Message.assistant([TextPart(text="明日の東京は晴れです。")], model="offline"),
    ).close()
    make(sessions, "zh", tmp_path, Message.user("请帮我修复数据库连接的问题")).close()
    ix = index(tmp_path)
    assert hits(ix, "天気予報") == [("ja", "user", "東京の天気予報を調べてください")]
    assert {h[2] for h in hits(ix, "東京")} == {"東京の天気予報を調べてください", "明日の東京は晴れです。"}  # 2 chars
    assert hits(ix, "晴れ", role="assistant") == [("ja", "assistant", "明日の東京は晴れです。")]
    assert hits(ix, "数据库") == [("zh", "user", "请帮我修复数据库连接的问题")]
    assert hits(ix, "连接") == [("zh", "user", "请帮我修复数据库连接的问题")]


def test_here_keeps_sessions_started_in_this_directory(tmp_path: Path) -> None:
    sessions, a, b = tmp_path / "sessions", tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    make(sessions, "in-a", a, Message.user("shared words")).close()
    make(sessions, "in-b", b, Message.user("shared words")).close()
    assert [h[0] for h in hits(index(tmp_path), "shared", cwd=a)] == ["in-a"]


def test_appends_are_indexed_incrementally_and_rewrites_afresh(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    s = make(sessions, "s", tmp_path, Message.user("alpha one"))
    ix = index(tmp_path)
    assert ix.refresh() == 1 and ix.refresh() == 0  # unchanged: not read again
    s.append(Message.user("alpha two"))
    assert ix.refresh() == 1
    assert sorted(h[2] for h in hits(ix, "alpha")) == ["alpha one", "alpha two"]  # no line twice
    rows = ix.db.execute("SELECT count(*) FROM lines").fetchone()[0]
    assert rows == 2
    s.rewrite([Message.user("beta only")])  # compaction-like rewrite: a new file in its place
    s.close()
    assert hits(ix, "alpha") == [] and hits(ix, "beta") == [("s", "user", "beta only")]
    (sessions / "s.jsonl").unlink()
    assert hits(ix, "beta") == []


def test_a_torn_last_line_waits_and_a_grown_one_is_read(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    make(sessions, "s", tmp_path, Message.user("first")).close()
    path = sessions / "s.jsonl"
    line = b'{"type":"message","role":"user","parts":[{"type":"text","text":"second line"}]}'
    with path.open("ab") as f:
        f.write(line[:30])
    ix = index(tmp_path)
    assert hits(ix, "second") == []
    with path.open("ab") as f:
        f.write(line[30:] + b"\n")
    assert hits(ix, "second") == [("s", "user", "second line")]


def test_an_index_written_over_in_place_is_read_afresh(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    make(sessions, "s", tmp_path, Message.user("original words")).close()
    ix = index(tmp_path)
    assert hits(ix, "original")
    path = sessions / "s.jsonl"
    data = path.read_bytes().replace(b"original words", b"replaced words")
    with path.open("r+b") as f:  # same file, same size, changed bytes: the signature sees it
        f.write(data + b'{"type":"message","role":"user","parts":[{"type":"text","text":"more"}]}\n')
    assert hits(ix, "original") == [] and hits(ix, "replaced") == [("s", "user", "replaced words")]


def test_damaged_files_and_giant_lines_never_fail_a_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_mod, "MAX_LINE_BYTES", 4096)
    sessions = tmp_path / "sessions"
    make(sessions, "ok", tmp_path, Message.user("needle here")).close()
    (sessions / "empty.jsonl").write_bytes(b"")
    (sessions / "binary.jsonl").write_bytes(os.urandom(5000))
    (sessions / "noheader.jsonl").write_text(
        '{"type":"message","role":"user","parts":[{"type":"text","text":"needle"}]}\n'
    )
    giant = json.dumps(
        {
            "type": "message",
            "role": "tool",
            "parts": [{"type": "tool_result", "call_id": "x", "name": "shell", "content": "needle " * 2000}],
        }
    )
    s = make(sessions, "giant", tmp_path, Message.user("before"))
    s.close()
    with (sessions / "giant.jsonl").open("a") as f:
        f.write(giant + "\n")
        f.write('{"type":"message","role":"user","parts":"not a list"}\n')
        f.write("not json at all\n")
        f.write('{"type":"message","role":"user","parts":[{"type":"text","text":"needle after"}]}\n')
    (sessions / "dir.jsonl").mkdir()
    found = hits(index(tmp_path), "needle")
    assert sorted(found) == [("giant", "user", "needle after"), ("ok", "user", "needle here")]


def test_a_missing_or_damaged_index_is_rebuilt(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    make(sessions, "s", tmp_path, Message.user("kept words")).close()
    ix = index(tmp_path)
    assert hits(ix, "kept")
    ix.close()
    (tmp_path / "search.sqlite").unlink()
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"search.sqlite{suffix}").unlink(missing_ok=True)
    assert hits(index(tmp_path), "kept") == [("s", "user", "kept words")]
    (tmp_path / "search.sqlite").write_bytes(b"this is not a database" * 100)
    assert hits(index(tmp_path), "kept") == [("s", "user", "kept words")]
    db = sqlite3.connect(tmp_path / "search.sqlite")
    db.execute("UPDATE meta SET value = '0' WHERE key = 'version'")  # an index of another version
    db.commit(), db.close()
    assert hits(index(tmp_path), "kept") == [("s", "user", "kept words")]


def test_an_index_that_cannot_be_written_lives_in_memory(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    make(sessions, "s", tmp_path, Message.user("readonly words")).close()
    (tmp_path / "not-a-folder").write_text("")  # the index's folder cannot be made: a file stands there
    ix = SessionIndex(tmp_path / "not-a-folder" / "search.sqlite", sessions)
    assert hits(ix, "readonly") == [("s", "user", "readonly words")]


def test_excerpt_centres_on_the_match() -> None:
    line = "x" * 500 + " needle " + "y" * 500
    shown = excerpt(line, "needle")
    assert "needle" in shown and shown.startswith("…") and shown.endswith("…") and len(shown) <= 162
    assert excerpt("short", "short") == "short"

"""Records a session appends are frozen copies: a rewrite writes each one's line as it was
made, without parsing it back to check, because nothing can have changed it."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest

from arreio.engine.core.messages import Message
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.session.records import FrozenList, FrozenRecord, RecordLines, freeze


def _session(tmp_path: Path) -> Session:
    header = SessionHeader(id="20260627-160000-dddddd", created_at="2026-06-27T16:00:00.000Z", cwd="/w", model="m")
    return Session.create(tmp_path, header)


def test_an_appended_record_cannot_be_changed_through_extra(tmp_path: Path) -> None:
    with _session(tmp_path) as session:
        session.append_record({"type": "request", "usage": {"input_tokens": 3}, "tools": ["read_file"]})
        held = session.extra[-1]
        changes = [
            lambda: held.__setitem__("model", "x"),
            lambda: held.pop("type"),
            lambda: held.update(a=1),
            lambda: held.setdefault("b", 2),
            lambda: held.clear(),
            lambda: held["usage"].__setitem__("input_tokens", 9),
            lambda: held["tools"].append("shell"),
            lambda: held["tools"].__setitem__(0, "shell"),
            lambda: held["tools"].sort(),
            lambda: held.__delitem__("tools"),
        ]
        for change in changes:
            with pytest.raises(TypeError, match="cannot change once appended"):
                change()
        assert held == {"type": "request", "usage": {"input_tokens": 3}, "tools": ["read_file"]}


def test_a_rewrite_writes_every_record_as_appended(tmp_path: Path) -> None:
    with _session(tmp_path) as session:
        session.append(Message.user("hello"))
        for n in range(3):
            session.append_record({"type": "request", "messages": n, "tools": ["read_file", "grep"], "usage": {"n": n}})
        before = session.path.read_bytes()
        session.rewrite(list(session.messages))
        session.rewrite(list(session.messages))
    assert session.path.read_bytes() == before
    loaded, _ = Session.open(session.path)
    with loaded:
        assert [r["messages"] for r in loaded.extra] == [0, 1, 2]


def test_frozen_values_read_copy_and_pickle_as_json() -> None:
    record = freeze({"a": [1, {"b": (2, 3)}], "c": None})
    assert type(record) is FrozenRecord and type(record["a"]) is FrozenList and type(record["a"][1]) is FrozenRecord
    assert record == {"a": [1, {"b": [2, 3]}], "c": None}
    assert json.loads(json.dumps(record)) == record
    assert pickle.loads(pickle.dumps(record)) == record and type(pickle.loads(pickle.dumps(record))) is FrozenRecord
    thawed = copy.deepcopy(dict(record))
    assert thawed == record and {**record, "c": 1}["c"] == 1  # copies are ordinary dicts


def test_record_lines_redo_a_plain_record_that_changed_but_reuse_a_frozen_one() -> None:
    lines = RecordLines()
    plain = {"type": "note", "text": "one"}
    assert lines.line(plain, None) == b'{"type":"note","text":"one"}\n'
    plain["text"] = "two"
    assert lines.line(plain, None) == b'{"type":"note","text":"two"}\n'
    frozen = freeze({"type": "note", "text": "one"})
    first = lines.line(frozen, None)
    assert lines.line(frozen, None) is first

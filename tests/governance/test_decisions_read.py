"""The approval hook's view of a session's decisions (`DecisionsRead`): always what reading every record
gives (`latest_decisions`), but each look reads only the records appended since the last one — a
run with `--yes` looks once per sensitive call, and a long session holds thousands of records.
A real session file; records appended the ways a run and `arreio approve` append them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arreio.engine.governance.approvals import DecisionsRead, latest_decisions, record
from arreio.engine.session.file import Session
from arreio.engine.session.format import SessionHeader


class ReadCounting(list):
    """A session's `extra` that counts the records read out of it (a test seam, not a mock: it is
    the list, and every record is really there)."""

    read = 0

    def __iter__(self) -> Any:
        for item in super().__iter__():
            type(self).read += 1
            yield item

    def __getitem__(self, key: Any) -> Any:
        got = super().__getitem__(key)
        type(self).read += len(got) if isinstance(key, slice) else 1
        return got


def session(tmp_path: Path, sid: str = "20261203-210000-aaaaaa") -> Session:
    header = SessionHeader(id=sid, created_at="2026-12-03T21:00:00.000Z", cwd=str(tmp_path), model="m")
    made = Session.create(tmp_path / "sessions", header, durable=False)
    made.extra = ReadCounting(made.extra)
    return made


def request(n: int) -> dict[str, Any]:
    return {"type": "request", "run_id": "run-1", "messages": n, "model": "m"}


def test_decisions_read_as_they_grow_match_reading_every_record(tmp_path: Path) -> None:
    s = session(tmp_path)
    seen = DecisionsRead()
    assert seen.of(s) == {}
    s.append_record(record("c1", "shell", "pending", "arreio", "t1"), sync=False)
    s.append_record(request(1), sync=False)
    assert seen.of(s)["c1"]["status"] == "pending"
    s.append_record(record("c1", "shell", "approved", "ana (terminal)", "t2"), sync=False)  # the latest wins
    s.append_record(record("c2", "write_file", "denied", "ana (terminal)", "t3", "no"), sync=False)
    s.append_record({"type": "call_started", "call_id": "c1", "name": "shell", "at": "t4"}, sync=False)
    assert seen.of(s) == latest_decisions(s.extra)
    assert seen.of(s)["c1"]["status"] == "approved" and seen.of(s)["c2"]["reason"] == "no"
    # The session loaded again (a resume, or `arreio approve` in between): another list, read whole.
    again, _ = Session.open(s.path)
    again.append_record(record("c3", "shell", "pending", "arreio", "t5"), sync=False)
    assert seen.of(again) == latest_decisions(again.extra) and set(seen.of(again)) == {"c1", "c2", "c3"}


def test_a_long_session_is_not_read_whole_at_every_look(tmp_path: Path) -> None:
    s = session(tmp_path)
    seen = DecisionsRead()
    turns = 500
    ReadCounting.read = 0
    for turn in range(turns):
        s.append_record(request(turn), sync=False)  # what every turn appends
        if turn % 50 == 0:
            s.append_record(record(f"c{turn}", "shell", "approved", "ana (terminal)", "t"), sync=False)
        assert seen.of(s).get(f"c{turn - turn % 50}", {}).get("status") == "approved"
    records = len(s.extra)
    # Each record read once (reading them all at each look: ~records * turns / 2 = 127,500).
    assert ReadCounting.read == records
    ReadCounting.read = 0
    latest_decisions(s.extra)  # the seam counts: a whole reading is every record
    assert ReadCounting.read == records

"""An append chains onto the entry it wrote last without reading the journal back — but
only while the file is exactly as it left it. Another writer's entry, or a torn line, in between is
read from the file as before, so the chain stays whole."""

from __future__ import annotations

import json
from pathlib import Path

from arreio.engine.providers.testing import FixedClock
from arreio.engine.walls.audit import AuditJournal
from arreio.engine.walls.redact import Redactor


def _journal(state: Path) -> AuditJournal:
    journal = AuditJournal(state, FixedClock(), redactor=Redactor({}))
    journal.durable = False
    return journal


def test_two_writers_interleaved_keep_one_chain(tmp_path: Path) -> None:
    one, two = _journal(tmp_path), _journal(tmp_path)  # two processes' journals on one file
    for i in range(6):
        (one if i % 3 else two).append("tool_call", {"i": i})
    entries = one.entries()
    assert [e["seq"] for e in entries] == [1, 2, 3, 4, 5, 6]
    assert [e["prev"] for e in entries[1:]] == [e["hash"] for e in entries[:-1]]
    assert one.verify().ok


def test_a_torn_line_after_our_entry_is_read_past(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    first = journal.append("tool_call", {"i": 1})
    with open(journal.path, "ab") as handle:
        handle.write(b'{"v":1,"seq":2,"torn')  # a crash in another writer's append
    second = journal.append("tool_call", {"i": 2})
    assert second["prev"] == first["hash"] and second["seq"] == 2
    lines = journal.path.read_bytes().split(b"\n")
    assert json.loads(lines[-2])["hash"] == second["hash"]  # ours started on a fresh line
    assert not journal.verify().ok  # and verify still names the torn line

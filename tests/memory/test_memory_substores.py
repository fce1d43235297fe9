"""Append-only substores: ids, header, crash-safe appends, torn tails, listing, concurrency."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime

import pytest

from arreio.engine.core.errors import UsageError
from arreio.engine.walls.redact import Redactor
from arreio.memory.record_id import CROCKFORD, UlidGenerator, decode_time_ms, new_record_id
from arreio.memory.run_records import record_decision, record_episode, record_transcript
from arreio.memory.substores import PREFIXES, SUBSTORES, SubstoreRecord, Substores

ULID = re.compile(rf"^[{CROCKFORD}]{{26}}$")


class TestRecordId:
    def test_shape_and_embedded_time(self):
        now = datetime(2026, 6, 27, 16, 0, 0, 123000, tzinfo=UTC)
        record_id = new_record_id("dec", now)
        prefix, ulid = record_id.split("-")
        assert prefix == "dec" and ULID.match(ulid)
        assert decode_time_ms(ulid) == 1782576000123

    def test_monotonic_within_the_same_millisecond(self):
        generator = UlidGenerator()
        now = datetime(2026, 6, 27, 16, 0, tzinfo=UTC)
        ids = [generator.new(now) for _ in range(500)]
        assert ids == sorted(ids) and len(set(ids)) == 500

    def test_a_clock_stepping_back_gets_ids_at_its_own_time(self):
        generator = UlidGenerator()
        earlier_time = datetime(2026, 6, 27, 16, 0, 0, tzinfo=UTC)
        later = generator.new(datetime(2026, 6, 27, 16, 0, 1, tzinfo=UTC))
        earlier = generator.new(earlier_time)
        assert earlier < later
        assert decode_time_ms(earlier) == 1782576000000

    def test_sorts_by_time_across_milliseconds(self):
        generator = UlidGenerator()
        a = generator.new(datetime(2026, 1, 1, tzinfo=UTC))
        b = UlidGenerator().new(datetime(2026, 1, 2, tzinfo=UTC))
        assert a < b


def test_append_writes_header_then_records(substores, state, clock):
    record = substores.append("decision", "cli", {"kind": "approval", "verdict": "approved"})
    assert record.id.startswith("dec-") and ULID.match(record.id[4:])
    assert (record.agent, record.at) == ("cli", "2026-06-27T16:00:00.000Z")
    lines = (state / "memory" / "decision.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"type": "header", "substore": "decision", "version": 1}
    assert json.loads(lines[1]) == {"type": "record", **record.model_dump()}
    assert len(lines) == 2


@pytest.mark.parametrize("substore", SUBSTORES)
def test_every_substore_has_its_prefix(substores, substore):
    assert substores.append(substore, "agent", {}).id.startswith(PREFIXES[substore] + "-")


def test_prefixes():
    assert PREFIXES == {
        "episodic": "epi",
        "semantic": "sem",
        "procedural": "pro",
        "decision": "dec",
        "transcript": "tra",
    }


def test_unknown_substore_lists_the_five(substores):
    for call in (
        lambda: substores.append("notes", "a", {}),
        lambda: substores.list("notes"),
        lambda: substores.get("notes", "x"),
    ):
        with pytest.raises(UsageError) as error:
            call()
        assert all(name in error.value.message for name in SUBSTORES)


def test_agent_is_required(substores):
    with pytest.raises(UsageError, match="agent"):
        substores.append("episodic", " ", {})


def test_unserialisable_payload_is_a_usage_error(substores, state):
    with pytest.raises(UsageError, match="JSON"):
        substores.append("episodic", "a", {"when": object()})
    assert not (state / "memory" / "episodic.jsonl").exists()


def test_list_newest_first_with_total_limit_agent_since(substores, clock):
    made = []
    for agent in ("cli", "runner", "cli", "learner"):
        made.append(substores.append("decision", agent, {"n": len(made)}))
        clock.advance(60)
    records, total = substores.list("decision")
    assert total == 4
    assert [r.id for r in records] == [r.id for r in reversed(made)]
    records, total = substores.list("decision", limit=2)
    assert [r.payload["n"] for r in records] == [3, 2] and total == 4
    records, _ = substores.list("decision", agent="cli")
    assert [r.payload["n"] for r in records] == [2, 0]
    records, _ = substores.list("decision", since="2026-06-27T16:02:00Z")
    assert [r.payload["n"] for r in records] == [3, 2]
    records, _ = substores.list("decision", since="2026-06-27T16:01:00.001+00:00")
    assert [r.payload["n"] for r in records] == [3, 2]
    records, _ = substores.list("decision", limit=0)
    assert records == []


def test_list_bad_arguments(substores):
    with pytest.raises(UsageError, match="ISO-8601"):
        substores.list("decision", since="yesterday")
    with pytest.raises(UsageError, match="--limit"):
        substores.list("decision", limit=-1)


def test_empty_store(substores):
    assert substores.list("semantic") == ([], 0)
    assert substores.get("semantic", "sem-x") is None


def test_get(substores):
    first = substores.append("procedural", "curator", {"skill": "a"})
    substores.append("procedural", "curator", {"skill": "b"})
    assert substores.get("procedural", first.id) == first
    assert substores.get("procedural", "pro-NOPE") is None


class TestTornTail:
    def tear(self, substores, state):
        substores.append("episodic", "cli", {"n": 1})
        substores.append("episodic", "cli", {"n": 2})
        path = state / "memory" / "episodic.jsonl"
        with open(path, "ab") as handle:
            handle.write(b'{"type":"record","id":"epi-0","agent":"cli","at":"2026-')  # crash mid-append
        return path

    def test_repaired_on_read_with_a_warning_and_no_lost_lines(self, substores, state):
        path = self.tear(substores, state)
        records, total = substores.list("episodic")
        assert total == 2 and [r.payload["n"] for r in records] == [2, 1]
        assert any("torn" in message for message in substores.diagnostics)
        assert path.read_bytes().endswith(b"\n")
        assert len(path.read_text(encoding="utf-8").splitlines()) == 3

    def test_repaired_before_the_next_append(self, substores, state):
        path = self.tear(substores, state)
        substores.append("episodic", "cli", {"n": 3})
        lines = path.read_text(encoding="utf-8").splitlines()
        assert [json.loads(line).get("payload", {}).get("n") for line in lines] == [None, 1, 2, 3]

    def test_torn_header_only(self, substores, state):
        folder = state / "memory"
        folder.mkdir(parents=True)
        (folder / "semantic.jsonl").write_bytes(b'{"type":"hea')
        record = substores.append("semantic", "learner", {"fact": "x"})
        lines = (folder / "semantic.jsonl").read_text(encoding="utf-8").splitlines()
        assert json.loads(lines[0])["type"] == "header"
        assert substores.list("semantic") == ([record], 1)


def test_unreadable_middle_line_skipped_with_warning(substores, state):
    substores.append("decision", "cli", {"n": 1})
    path = state / "memory" / "decision.jsonl"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("not json\n")
        handle.write('{"type":"record","id":"dec-x"}\n')
    substores.append("decision", "cli", {"n": 2})
    records, total = substores.list("decision")
    assert total == 2
    assert len(substores.diagnostics) == 2


def test_newer_format_version_refused(substores, state):
    folder = state / "memory"
    folder.mkdir(parents=True)
    (folder / "decision.jsonl").write_text('{"type":"header","substore":"decision","version":2}\n', encoding="utf-8")
    with pytest.raises(UsageError, match="version 2"):
        substores.list("decision")


class TestRunRecords:
    def test_transcript_episode_decision_payloads(self, substores):
        transcript = record_transcript(
            substores,
            "pipeline",
            run_id="r1",
            session_id="s1",
            session_path=".arreio/sessions/s1.jsonl",
            report_path=".arreio/runs/r1/report.json",
        )
        assert transcript.id.startswith("tra-")
        assert transcript.payload["report_path"] == ".arreio/runs/r1/report.json"
        episode = record_episode(
            substores,
            "pipeline",
            run_id="r1",
            goal="fix the tests",
            verdict="success",
            tools_used=["shell", "read_file", "shell"],
            cost_usd=0.12,
            summary="fixed two imports",
        )
        assert episode.payload["tools_used"] == ["shell", "read_file"]
        assert episode.payload["cost_usd"] == 0.12
        decision = record_decision(
            substores, "pipeline", kind="gate", subject="pytest", verdict="passed", run_id="r1", details={"exit": 0}
        )
        assert decision.payload == {
            "kind": "gate",
            "subject": "pytest",
            "verdict": "passed",
            "reason": "",
            "run_id": "r1",
            "details": {"exit": 0},
        }
        assert substores.get("decision", decision.id) == decision


def test_record_model_round_trip():
    record = SubstoreRecord(id="dec-1", agent="a", at="2026-06-27T16:00:00.000Z", payload={"x": [1]})
    assert SubstoreRecord.model_validate_json(record.model_dump_json()) == record


APPENDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from arreio.engine.walls.redact import Redactor
    from arreio.memory.substores import Substores

    state, name, count, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    substores = Substores(state, redactor=Redactor())
    while not go.exists():
        time.sleep(0.001)
    for number in range(count):
        substores.append("transcript", name, {"n": number, "pad": "x" * 2000})
    """
)


@pytest.mark.slow
def test_two_processes_appending_concurrently_lose_nothing(tmp_path):
    state, go, count = tmp_path / ".arreio", tmp_path / "go", 50
    writers = [
        subprocess.Popen([sys.executable, "-c", APPENDER, str(state), name, str(count), str(go)]) for name in ("A", "B")
    ]
    time.sleep(0.3)
    go.touch()
    assert [writer.wait(timeout=60) for writer in writers] == [0, 0]
    substores = Substores(state, redactor=Redactor())
    records, total = substores.list("transcript")
    assert total == 2 * count and substores.diagnostics == []
    assert len({record.id for record in records}) == 2 * count
    for name in ("A", "B"):
        assert sorted(r.payload["n"] for r in records if r.agent == name) == list(range(count))
    lines = (state / "memory" / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum(1 for line in lines if '"header"' in line) == 1

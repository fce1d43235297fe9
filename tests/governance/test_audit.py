"""The audit journal: a hash chain that `arreio audit verify` checks, naming the first broken entry."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

from arreio.engine.providers.testing import FixedClock
from arreio.engine.walls.audit import AuditJournal
from arreio.engine.walls.redact import Redactor
from tests.governance.helpers import run


def journal_with(tmp_path: Path, n: int) -> AuditJournal:
    journal = AuditJournal(tmp_path / ".arreio", FixedClock(), redactor=Redactor())
    for i in range(n):
        journal.append("tool_call", {"run_id": f"run-{i % 2}", "name": "read_file", "i": i})
    return journal


def test_chain_verifies_and_links_each_entry(tmp_path: Path) -> None:
    journal = journal_with(tmp_path, 5)
    entries = journal.entries()
    assert [e["seq"] for e in entries] == [1, 2, 3, 4, 5]
    assert all(b["prev"] == a["hash"] for a, b in pairwise(entries))
    result = journal.verify()
    assert result.ok and result.entries == 5


def test_an_edit_in_the_middle_is_caught_at_that_entry(tmp_path: Path) -> None:
    journal = journal_with(tmp_path, 5)
    lines = journal.path.read_text().splitlines()
    lines[2] = lines[2].replace('"i":2', '"i":99')
    journal.path.write_text("\n".join(lines) + "\n")
    result = journal.verify()
    assert not result.ok and result.broken_line == 3 and "entry 3 was changed" in result.reason


def test_a_deleted_line_is_caught_at_the_entry_after_it(tmp_path: Path) -> None:
    journal = journal_with(tmp_path, 5)
    lines = journal.path.read_text().splitlines()
    del lines[1]
    journal.path.write_text("\n".join(lines) + "\n")
    result = journal.verify()
    assert not result.ok and result.broken_line == 2 and "deleted or inserted" in result.reason


def test_an_entry_with_fields_of_the_wrong_type_is_reported_not_a_crash(tmp_path: Path) -> None:
    """Regression: `"prev": 5` made `audit verify` an internal error (TypeError), and a payload
    that is a string made `audit tail` one — the commands that exist to inspect a tampered journal."""
    journal = journal_with(tmp_path, 3)
    lines = journal.path.read_text().splitlines()
    record = json.loads(lines[1])
    for field, value in (("prev", 5), ("seq", "2"), ("hash", None), ("seq", True), ("payload", "str")):
        lines[1] = json.dumps({**record, field: value})
        journal.path.write_text("\n".join(lines) + "\n")
        result = journal.verify()
        assert not result.ok and result.broken_line == 2 and result.reason == "line is not an audit entry", field
        assert [e["seq"] for e in journal.tail()] == [1, 3]


def test_a_torn_line_does_not_hide_an_entry_changed_after_it(tmp_path: Path) -> None:
    """Regression: after one write cut short, verify stopped at that line for good, so an entry
    edited later was never seen. The appender chains past a torn line; verify now walks past it."""
    journal = journal_with(tmp_path, 3)
    with journal.path.open("ab") as handle:
        handle.write(b'{"seq": 4, "to')  # a crash mid-write
    for i in range(3):
        journal.append("tool_call", {"run_id": "run-9", "name": "grep", "i": 10 + i})
    result = journal.verify()
    assert not result.ok and result.broken_line == 4
    assert result.reason == "line is not valid JSON; the 3 entries after it check out" and result.entries == 3
    lines = journal.path.read_text().splitlines()
    lines[5] = lines[5].replace('"i":11', '"i":99')  # entry 5, after the torn line
    journal.path.write_text("\n".join(lines) + "\n")
    result = journal.verify()
    assert not result.ok and result.broken_line == 6 and "entry 5 was changed" in result.reason
    assert result.entries == 4  # entries 1-4 check out (the torn line is not one)


def test_an_anchor_mismatch_counts_the_entries_before_it_and_a_missing_journal_says_so(tmp_path: Path) -> None:
    journal = journal_with(tmp_path, 6)
    entries = journal.entries()
    result = journal.verify([("run run-x", 6, "0" * 64)])
    assert not result.ok and result.broken_line == 6 and result.entries == 5
    assert journal.verify([("run run-x", 6, entries[5]["hash"])]).ok
    journal.path.unlink()
    gone = journal.verify([("run run-x", 6, entries[5]["hash"])])
    assert not gone.ok and gone.reason == "the journal file is gone, and run run-x recorded entry 6"


def test_a_rehashed_forgery_still_breaks_the_next_link(tmp_path: Path) -> None:
    from arreio.engine.walls.audit import canonical, entry_hash

    journal = journal_with(tmp_path, 4)
    entries = journal.entries()
    forged = {**entries[1], "payload": {**entries[1]["payload"], "name": "shell"}}
    body = {k: forged[k] for k in ("v", "seq", "at", "kind", "payload")}
    forged["hash"] = entry_hash(forged["prev"], body)
    entries[1] = forged
    journal.path.write_text("".join(canonical(e) + "\n" for e in entries))
    result = journal.verify()
    assert not result.ok and result.broken_line == 3


def test_verify_and_tail_from_the_cli(work: Path, cli) -> None:
    journal = journal_with(work, 6)
    ok = cli("audit", "verify")
    assert ok.exit_code == 0 and "intact: 6 entries" in ok.stdout
    tail = cli("audit", "tail", "-n", "2", "--json")
    assert [json.loads(line)["seq"] for line in tail.stdout.splitlines()] == [5, 6]
    only = cli("audit", "tail", "--run", "run-1", "--json")
    assert [json.loads(line)["payload"]["i"] for line in only.stdout.splitlines()] == [1, 3, 5]
    assert "read_file" in cli("audit", "tail").stdout
    text = journal.path.read_text().replace('"i":4', '"i":5')
    journal.path.write_text(text)
    broken = cli("audit", "verify")
    assert broken.exit_code == 1 and "BROKEN at line 5" in broken.stdout and "entry 5 was changed" in broken.stdout


def test_a_run_journals_tool_calls_approvals_and_its_cost(tmp_path: Path) -> None:
    work = tmp_path / "w"
    replies = [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}},
                {"name": "shell", "arguments": {"command": "echo hi"}},
            ]
        },
        {"text": "done"},
    ]
    _, report = run(work, replies, yes=True)
    entries = AuditJournal(work / ".arreio", redactor=Redactor()).entries()
    assert [e["kind"] for e in entries] == ["run_start", "tool_call", "approval", "tool_call", "gate", "run_end"]
    assert entries[1]["payload"]["args_digest"].startswith("sha256:") and entries[1]["payload"]["status"] == "ok"
    assert entries[2]["payload"]["by"] == "--yes" and entries[2]["payload"]["name"] == "shell"
    assert entries[-1]["payload"]["cost_usd"] == 0.0 and entries[-1]["payload"]["verdict"] == "success"
    assert all(e["payload"]["run_id"] == report["run_id"] for e in entries)
    assert AuditJournal(work / ".arreio", redactor=Redactor()).verify().ok


def test_the_curator_writes_its_changes_to_the_journal(work: Path, cli) -> None:
    from arreio.cli.commands.curator import build_curator

    build_curator(None, None, None).on_audit({"kind": "archived", "name": "old-skill"})
    entries = AuditJournal(work / ".arreio", redactor=Redactor()).entries()
    assert entries[-1]["kind"] == "curator" and entries[-1]["payload"]["name"] == "old-skill"


def test_a_cut_off_tail_is_caught_by_the_run_reports_anchor(in_project: Path, cli) -> None:
    import json as _json

    (in_project / "G.md").write_text("# Look around\n")
    assert cli("run", "--goal", "G.md", "--offline").exit_code == 0
    report = _json.loads(next((in_project / ".arreio" / "runs").glob("*/report.json")).read_text())
    assert report["audit_head"]["seq"] >= 2
    assert cli("audit", "verify").exit_code == 0
    journal = in_project / ".arreio" / "audit.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(lines[:-1]))  # the chain itself is still valid: only the anchor sees it
    result = cli("audit", "verify")
    assert result.exit_code == 1 and "entries were removed from its end" in result.stdout


def test_the_v1_journal_fixture_still_verifies(tmp_path: Path) -> None:
    """Format version 1 is frozen in fixtures/audit/v1: a later arreio must still verify it."""
    import shutil

    from arreio.engine.walls.audit import AuditJournal
    from tests.conftest import REPO

    shutil.copy(REPO / "fixtures" / "audit" / "v1" / "audit.jsonl", tmp_path / "audit.jsonl")
    result = AuditJournal(tmp_path, redactor=Redactor()).verify()
    assert result.ok and result.entries == 4
    assert [e["kind"] for e in AuditJournal(tmp_path, redactor=Redactor()).entries()] == [
        "run_start",
        "tool_call",
        "approval",
        "run_end",
    ]


def test_canonical_is_the_spelling_json_dumps_gives() -> None:
    """`canonical` skips `json.dumps`' per-call encoder set-up; every hash in every journal depends on
    it spelling values exactly as before."""
    import json
    from pathlib import PurePosixPath

    import pytest

    from arreio.engine.walls.audit import canonical

    values = [
        {"b": 1, "a": [1, 2.5, -0.0, 1e300], "é": "naïve — ✓", "z": {"y": None, "x": True}},
        ["tuple", (1, 2), {"nested": {"k": 'v\n\t"q"'}}],
        "just a string with \u2028 and \x00",
        {"path": PurePosixPath("/tmp/x"), "n": float("nan"), "inf": float("inf")},
        {"k1": 1, "k0": [{"b": 2, "a": 1}]},
        [],
        {},
        42,
    ]
    for value in values:
        assert canonical(value) == json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        canonical(loop)

"""`arreio sessions list|show|doctor`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arreio.engine.core.errors import SessionError

GOAL = "fixtures/goals/quickstart.md"


def _run(cli) -> str:
    result = cli("run", "--goal", GOAL, "--offline", "--json")
    return json.loads(result.stdout.splitlines()[0])["session_id"]


def test_list_show_and_json(workdir: Path, cli) -> None:
    assert 'no sessions yet (start one with `arreio run "GOAL"` or `arreio chat`)' in cli("sessions", "list").stdout
    first, second = _run(cli), _run(cli)
    rows = json.loads(cli("sessions", "list", "--json").stdout)
    assert [r["id"] for r in rows] == [second, first]  # newest first
    # the second run finds the summary the first wrote: it lists build/ and reads it instead of overwriting it
    assert rows[0]["messages"] == 10 and rows[0]["last_run_verdict"] == "success"
    table = cli("sessions", "list").stdout
    assert first in table and "success" in table
    shown = cli("sessions", "show", first).stdout
    assert "read_file" in shown and "Done. I listed" in shown
    data = json.loads(cli("sessions", "show", first, "--json").stdout)
    assert data["header"]["id"] == first and len(data["messages"]) == 9 and data["repairs"] == []


def test_doctor_reports_then_fixes(workdir: Path, cli) -> None:
    sid = _run(cli)
    path = workdir / ".arreio" / "sessions" / f"{sid}.jsonl"
    lines = path.read_text().splitlines()
    # drop the last tool result (an orphan call appears) and leave a torn line at the end
    last_tool = max(i for i, ln in enumerate(lines) if '"role":"tool"' in ln)
    del lines[last_tool]
    path.write_text("\n".join(lines) + '\n{"type":"message","role":"assis')
    before = path.read_bytes()
    report = cli("sessions", "doctor", sid)
    assert report.exit_code == 1 and "needs 2 repairs" in report.stdout  # a check that found work
    assert "torn_tail" in report.stdout and "interrupted_result" in report.stdout
    assert path.read_bytes() == before  # without --fix nothing is written
    assert cli("sessions", "doctor", sid, "--json").exit_code == 1
    fixed = cli("sessions", "doctor", sid, "--fix", "--json")
    assert fixed.exit_code == 0 and json.loads(fixed.stdout)["fixed"] is True
    healthy = cli("sessions", "doctor", sid)
    assert healthy.exit_code == 0 and "healthy" in healthy.stdout


def test_unknown_or_ambiguous_ids(workdir: Path, cli) -> None:
    _run(cli), _run(cli)
    result = cli("sessions", "show", "2")
    assert result.exit_code == 2 and "arreio: error:" in result.stderr
    assert cli("sessions", "doctor", "zzz").exit_code == 2


def test_help_reads_well(cli) -> None:
    for args in (["--help"], ["run", "--help"], ["sessions", "--help"], ["sessions", "doctor", "--help"]):
        result = cli(*args)
        assert result.exit_code == 0 and "Usage" in result.stdout
    assert "--resume" in cli("run", "--help").stdout


def test_a_damaged_session_file_does_not_wreck_the_list(workdir: Path, cli) -> None:
    sid = _run(cli)
    Path(".arreio/sessions/20250101-000000-broken.jsonl").write_text("not json at all\n")
    table = cli("sessions", "list").stdout
    assert sid in table and "Quickstart" in table  # the healthy row keeps its columns
    assert "damaged" in table and "20250101-000000-broken: " in table and "sessions doctor" in table


def test_doctor_leaves_a_session_in_use_alone(workdir: Path, cli) -> None:
    from arreio.engine.session.lock import SessionLock

    sid = _run(cli)
    path = workdir / ".arreio" / "sessions" / f"{sid}.jsonl"
    before = path.read_bytes()
    held = SessionLock(path).acquire(sid)  # as a live run holds it
    try:
        for args in (("sessions", "doctor", sid), ("sessions", "doctor", sid, "--fix")):
            result = cli(*args)
            assert result.exit_code == 2 and "is in use by another arreio process" in result.stderr
    finally:
        held.release()
    assert path.read_bytes() == before
    assert cli("sessions", "doctor", sid).exit_code == 0


def test_a_prefix_names_the_root_session_not_its_sub_agents(workdir: Path) -> None:
    from arreio.engine.session.store import SessionStore

    folder = workdir / ".arreio" / "sessions"
    folder.mkdir(parents=True)
    for name in ("20261130-1200-abc", "20261130-1200-abc.d1", "20261130-1200-abc.d2"):
        (folder / f"{name}.jsonl").write_text("{}\n")
    store = SessionStore(folder)
    assert store.resolve("20261130-1200-a") == "20261130-1200-abc"
    assert store.resolve("20261130-1200-abc.d2") == "20261130-1200-abc.d2"
    with pytest.raises(SessionError, match="ambiguous"):  # a prefix with a dot looks among sub-agents
        store.resolve("20261130-1200-abc.d")

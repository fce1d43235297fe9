"""Parallel read-only calls against a real MCP server (fixtures/mcp/slow_reads.py, stdio): eight
`lookup` calls (readOnlyHint, 0.5 s each) in one reply overlap, and still land in declared order —
in the session, in the events — even when they finish in the reverse order."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing
from tests.conftest import REPO
from tests.families.conftest import configure, script

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # a real MCP server process

SLOW = REPO / "fixtures" / "mcp" / "slow_reads.py"
KEYS = [f"k{i}" for i in range(8)]


def _server(**env: str) -> dict:
    return {"command": sys.executable, "args": [str(SLOW)], "env": env}


def _events(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_eight_slow_reads_overlap_and_land_in_declared_order(project: Path, cli) -> None:
    log = project / "slow.log"
    # k0 sleeps longest, k7 shortest: completion order is the reverse of the declared order
    configure(
        project,
        {
            "mcp_servers": {
                "slow": _server(SLOW_READS_DELAY_S="0.1", SLOW_READS_LOG=str(log), SLOW_READS_ORDER=",".join(KEYS))
            },
            "tools": {"parallel": 8},
        },
    )
    replies = [{"tool_calls": [{"name": "slow__lookup", "arguments": {"key": k}} for k in KEYS]}, {"text": "ok"}]
    result = cli("run", "--goal", "GOAL.md", "--script", script(project, replies), "--json")
    assert result.exit_code == 0, result.output
    events = _events(result.stdout)
    pairs = [(e["type"], e["call_id"]) for e in events if e["type"] in ("tool_start", "tool_end")]
    ids = [cid for kind, cid in pairs if kind == "tool_start"]
    assert pairs == [(kind, cid) for cid in ids for kind in ("tool_start", "tool_end")]
    assert [e["preview"] for e in events if e["type"] == "tool_end"] == [f"value of {k}" for k in KEYS]
    ends = [line.split()[2] for line in log.read_text().splitlines() if line.split()[1] == "end"]
    assert ends == list(reversed(KEYS))  # they finished in reverse …
    starts = [float(line.split()[0]) for line in log.read_text().splitlines() if line.split()[1] == "start"]
    first_end = min(float(line.split()[0]) for line in log.read_text().splitlines() if line.split()[1] == "end")
    assert max(starts) < first_end  # … and all eight were running at once
    session, _ = Session.open(next((project / ".arreio" / "sessions").glob("*.jsonl")), repair=False)
    assert check_pairing(session.messages) == []
    results = [p.content for m in session.messages if m.role == "tool" for p in m.parts]
    assert results == [f"value of {k}" for k in KEYS]
    # the time saved is measured by tests/bench/bench_parallel_tools.py, not asserted: overlap is the fact


def test_a_writing_mcp_call_splits_the_stretch(project: Path, cli) -> None:
    log = project / "slow.log"
    configure(project, {"mcp_servers": {"slow": _server(SLOW_READS_DELAY_S="0.2", SLOW_READS_LOG=str(log))}})
    calls = [("lookup", "a"), ("lookup", "b"), ("touch", "t"), ("lookup", "c"), ("lookup", "d")]
    replies = [{"tool_calls": [{"name": f"slow__{n}", "arguments": {"key": k}} for n, k in calls]}, {"text": "ok"}]
    result = cli("run", "--goal", "GOAL.md", "--script", script(project, replies), "--json", "--yes")
    assert result.exit_code == 0, result.output
    moments = {" ".join(line.split()[1:]): float(line.split()[0]) for line in log.read_text().splitlines()}
    assert moments["start b"] < moments["end a"]  # a and b overlapped
    assert max(moments["end a"], moments["end b"]) <= moments["start touch t"]
    assert moments["end touch t"] <= min(moments["start c"], moments["start d"])
    assert moments["start d"] < moments["end c"]  # c and d overlapped

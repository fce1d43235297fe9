"""`arreio cassette show|diff`, and the committed format-1 cassette still replays."""

from __future__ import annotations

import json
from pathlib import Path

from arreio.engine.providers.cassette import load_cassette
from tests.conftest import REPO

FROZEN = REPO / "fixtures" / "cassettes" / "offline-quickstart.v1.cassette.jsonl"
GOAL = "fixtures/goals/quickstart.md"


def test_the_committed_v1_cassette_still_loads_and_replays(project, arreio) -> None:
    tape = load_cassette(FROZEN)
    assert tape.header.version == 1 and tape.header.model == "offline" and len(tape.calls) == 4
    work = project("replay")
    # lenient: the format is what this test freezes; prompts and tools may have changed since it was made
    result = arreio("run", "--goal", GOAL, "--replay", str(FROZEN), "--replay-mode", "lenient", "--json")
    assert result.code == 0, result.stderr
    assert [e["name"] for e in result.of("tool_end")] == ["list_dir", "read_file", "read_file", "write_file"]
    summary = (work / "build" / "quickstart-summary.md").read_text()
    assert "## fixtures/quickstart/notes.md" in summary and "Open items: 3" in summary
    assert result.done["final_text"].startswith("Done. I listed the working directory")


def test_show_summarises_calls_tools_tokens_and_cost(arreio) -> None:
    result = arreio("cassette", "show", str(FROZEN))
    assert result.code == 0, result.stderr
    assert "format v1" in result.stdout and "calls: 4" in result.stdout
    assert "list_dir ×1, read_file ×2, write_file ×1" in result.stdout and "cost a replay saves: $0" in result.stdout
    info = json.loads(arreio("cassette", "show", str(FROZEN), "--json").stdout)
    assert info["calls"] == 4 and info["tools_used"] == {"list_dir": 1, "read_file": 2, "write_file": 1}
    assert info["usage"]["input_tokens"] > 0 and info["cost_saved_usd"] == 0.0 and info["faults"] == []


def test_show_prices_a_vendor_cassette_and_lists_faults(project, arreio, tmp_path: Path) -> None:
    project("rec")
    script = tmp_path / "s.yaml"
    script.write_text(
        "- error: {status: 529, message: overloaded}\n"
        "- text: Done.\n  usage: {input_tokens: 1000000, output_tokens: 100000}\n"
    )
    cassette = tmp_path / "c.jsonl"
    assert arreio("run", "--goal", "G.md", "--script", str(script), "--record", str(cassette), "--json").code == 0
    # the same cassette as if recorded from a priced model: the header names the model
    lines = cassette.read_text().splitlines()
    header = json.loads(lines[0]) | {"model": "anthropic/claude-sonnet-4-5"}
    cassette.write_text(json.dumps(header) + "\n" + "\n".join(lines[1:]) + "\n")
    info = json.loads(arreio("cassette", "show", str(cassette), "--json").stdout)
    assert info["faults"] == ["call 1: retryable (HTTP 529): overloaded"]
    assert info["cost_saved_usd"] == 3.0 + 1.5  # 1M in at $3, 100k out at $15
    text = arreio("cassette", "show", str(cassette)).stdout
    assert "1 fault," in text and "$4.5000" in text


def test_diff_same_changed_added_removed(project, arreio, tmp_path: Path) -> None:
    project("a")
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert arreio("run", "--goal", GOAL, "--offline", "--record", str(a), "--json").code == 0
    same = arreio("cassette", "diff", str(a), str(a))
    assert same.code == 0 and "4 same" in same.stdout
    work = project("b")
    (work / "fixtures" / "quickstart" / "todo.md").write_text("# Todo\n\n- [ ] one thing\n")
    assert arreio("run", "--goal", GOAL, "--offline", "--record", str(b), "--json").code == 0
    changed = arreio("cassette", "diff", str(a), str(b))
    assert changed.code == 1
    assert "call 1: same" in changed.stdout and "call 2: same" in changed.stdout
    assert "call 3: changed: message 6 (tool result of read_file) differs; the reply differs" in changed.stdout
    rows = json.loads(arreio("cassette", "diff", str(a), str(b), "--json").stdout)
    assert rows["same"] is False and [c["status"] for c in rows["calls"]] == ["same", "same", "changed", "changed"]
    # a shorter recording: the later calls are "removed"
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(a.read_text().splitlines()[:3]) + "\n")
    cut = json.loads(arreio("cassette", "diff", str(a), str(short), "--json").stdout)
    assert [c["status"] for c in cut["calls"]] == ["same", "same", "removed", "removed"]
    grown = json.loads(arreio("cassette", "diff", str(short), str(a), "--json").stdout)
    assert [c["status"] for c in grown["calls"]][-2:] == ["added", "added"]


def test_cassette_commands_fail_in_one_line(arreio, tmp_path: Path) -> None:
    result = arreio("cassette", "show", str(tmp_path / "missing.jsonl"))
    assert result.code == 2 and result.stderr.strip().count("\n") == 0 and "cassette not found" in result.stderr
    (tmp_path / "x.jsonl").write_text("hello\n")
    result = arreio("cassette", "diff", str(FROZEN), str(tmp_path / "x.jsonl"))
    assert result.code == 2 and "not an arreio cassette" in result.stderr

"""What the model received is a lookup: each request is rebuilt from the session, digests checked."""

from __future__ import annotations

import json
from pathlib import Path

from arreio.engine.governance.requests import reconstruct
from tests.governance.helpers import run, write_config


def test_every_request_is_recoverable_exactly(tmp_path: Path) -> None:
    work = tmp_path / "w"
    (work / "d0").mkdir(parents=True)
    write_config(work, "governance:\n  max_tool_calls: 1\n")
    replies = [{"text": "look", "tool_calls": [{"name": "list_dir", "arguments": {"path": "d0"}}]}, {"text": "landed"}]
    from arreio.engine.providers.testing import ScriptedProvider

    provider = ScriptedProvider(replies)
    _, report = run(work, provider)
    rows = reconstruct(work / ".arreio" / "sessions" / f"{report['session_id']}.jsonl")
    assert len(rows) == len(provider.requests) == 2 and all(r["exact"] for r in rows)
    for row, sent in zip(rows, provider.requests, strict=True):
        assert [m["role"] for m in row["messages"]] == [m.role for m in sent.messages]
        assert [t["name"] for t in row["tools"]] == [t.name for t in sent.tools]
        assert row["system"] == [b.model_dump(mode="json") for b in sent.system]
        assert row["max_tokens"] == sent.max_tokens and row["run_id"] == report["run_id"]
    assert rows[1]["tools"] == [] and rows[1]["messages"][-1]["parts"][0]["text"].startswith("The run has reached")


def test_sessions_show_requests_view(work: Path, cli) -> None:
    (work / "s.yaml").write_text("- tool_calls: [{name: list_dir, arguments: {}}]\n- text: done\n")
    sid = json.loads(cli("run", "--goal", "GOAL.md", "--script", "s.yaml", "--json").stdout.splitlines()[0])[
        "session_id"
    ]
    shown = cli("sessions", "show", sid, "--requests")
    assert shown.exit_code == 0, shown.output
    assert "request 1 · offline" in shown.stdout and "request 2 · offline" in shown.stdout and "exact" in shown.stdout
    assert "tools: read_file" in shown.stdout and "+ call list_dir" in shown.stdout
    rows = json.loads(cli("sessions", "show", sid, "--requests", "--json").stdout)
    assert [len(r["messages"]) for r in rows] == [1, 3]


def test_what_later_hooks_change_is_what_gets_recorded(tmp_path: Path) -> None:
    """The context feature withdraws the result-set tools until a set exists; the record must show the
    tools the model was really offered, not the registry's list."""
    from arreio.engine.context.feature import ContextFeature
    from arreio.engine.providers.testing import ScriptedProvider

    work = tmp_path / "w"
    provider = ScriptedProvider([{"tool_calls": [{"name": "list_dir", "arguments": {}}]}, {"text": "done"}])
    _, report = run(work, provider, features=[ContextFeature()])
    rows = reconstruct(work / ".arreio" / "sessions" / f"{report['session_id']}.jsonl")
    sent = [[t.name for t in r.tools] for r in provider.requests]
    assert "result_query" not in sent[0]
    assert [[t["name"] for t in row["tools"]] for row in rows] == sent and all(r["exact"] for r in rows)

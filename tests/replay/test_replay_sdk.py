"""Record a run made through the REAL anthropic/openai SDKs against the local wire server — a fault,
then tool use — and replay it with no server and no key: the same events, the retry included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arreio.engine.context.window import context_window
from arreio.engine.providers.cassette import load_cassette
from tests.providers.provider_fakes import Reply
from tests.replay.cassette_helpers import normalised

MODELS = {"anthropic": "anthropic/claude-sonnet-4-5", "openai": "openai/gpt-4o"}
RATE_LIMITED = {
    "anthropic": Reply.error(
        429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}, {"retry-after": "0"}
    ),
    "openai": Reply.error(
        429,
        {"error": {"message": "Rate limit reached", "type": "requests", "param": None, "code": "rate_limit_exceeded"}},
        {"retry-after": "0"},
    ),
}
CUT = {"anthropic": "stream_cut_no_stop", "openai": "stream_cut_no_finish"}


@pytest.mark.parametrize("fault", ["429", "cut"])
@pytest.mark.parametrize("vendor", list(MODELS))
def test_sdk_run_records_and_replays_offline(
    vendor: str, fault: str, project, arreio, server, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    monkeypatch.setenv("ARREIO_BASE_URL", server.url)
    first_reply = RATE_LIMITED[vendor] if fault == "429" else Reply.stream(vendor, CUT[vendor])
    server.push(first_reply, Reply.stream(vendor, "tool_call"), Reply.stream(vendor, "text_only"))
    rec = project("rec")
    # the loopback server stands in for the vendor, and a local server bills nothing: priced as the vendor would;
    # nor is a vendor asked its window (a local server is): the table's number, as the replay uses
    (rec / ".arreio" / "config.yaml").write_text(
        "retry:\n  base_delay_s: 0.01\n  max_delay_s: 0.05\n"
        f"prices:\n  {MODELS[vendor]}: {{input: 2.5, output: 10}}\n"
        f"context:\n  windows: {{{MODELS[vendor]}: {context_window(MODELS[vendor])}}}\n"
    )
    cassette = tmp_path / f"{vendor}.cassette.jsonl"
    first = arreio("run", "--goal", "G.md", "--model", MODELS[vendor], "--record", str(cassette), "--json")
    assert first.code == 0, first.stderr
    assert len(first.of("retry")) == 1 and [e["name"] for e in first.of("tool_end")] == ["read_file"]
    assert len(server.seen) == 3

    tape = load_cassette(cassette)
    assert tape.header.model == MODELS[vendor] and len(tape.calls) == 3
    assert tape.calls[0].fault is not None and tape.calls[0].fault.kind == "retryable"
    if fault == "429":
        assert tape.calls[0].fault.status == 429
    assert tape.calls[1].fault is None and tape.calls[1].usage.input_tokens > 0
    text = cassette.read_text()
    assert "sk-ant-test" not in text and "sk-test-" not in text

    # offline: no key, no server address — a network call would fail the run
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ARREIO_BASE_URL"):
        monkeypatch.delenv(var)
    work = project("replay")
    again = arreio("run", "--goal", "G.md", "--replay", str(cassette), "--json")
    assert again.code == 0, again.stderr + again.done.get("message", "")
    assert len(server.seen) == 3
    assert normalised(again.events) == normalised(first.events)
    assert first.done["cost_usd"] > 0 and not first.done["free"]  # the recorded run was paid for
    assert again.done["cost_usd"] == 0 and again.done["free"]  # its replay is not
    assert again.of("retry")[0]["reason"] == first.of("retry")[0]["reason"]
    assert again.of("run_start")[0]["model"] == MODELS[vendor]  # the run is stamped with the recorded model
    report = json.loads((work / again.done["report_path"]).read_text())
    assert report["retries"] == 1 and report["tools_used"] == {"read_file": 1}

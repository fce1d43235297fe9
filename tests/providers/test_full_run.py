"""A full `arreio run` through the REAL anthropic and openai clients against a local wire server:
multi-turn tool use, then each fault class — handled as specified, the session left valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from provider_fakes import Reply
from typer.testing import CliRunner

from arreio.cli.app import app
from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing

MODELS = {"anthropic": "anthropic/claude-sonnet-4-5", "openai": "openai/gpt-4o"}


def _anthropic_error(kind: str, message: str) -> dict:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _openai_error(kind: str, message: str, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


FAULTS = {
    "anthropic": {
        "429": Reply.error(429, _anthropic_error("rate_limit_error", "slow down"), {"retry-after": "0"}),
        "500": Reply.error(500, _anthropic_error("api_error", "Internal server error")),
        "529": Reply.error(529, _anthropic_error("overloaded_error", "Overloaded")),
        "401": Reply.error(401, _anthropic_error("authentication_error", "invalid x-api-key")),
        "overflow": Reply.error(
            400, _anthropic_error("invalid_request_error", "prompt is too long: 212000 tokens > 200000 maximum")
        ),
    },
    "openai": {
        "429": Reply.error(
            429, _openai_error("requests", "Rate limit reached", "rate_limit_exceeded"), {"retry-after": "0"}
        ),
        "500": Reply.error(500, _openai_error("server_error", "The server had an error")),
        "529": Reply.error(503, _openai_error("server_error", "Slow Down")),
        "401": Reply.error(401, _openai_error("invalid_request_error", "Incorrect API key", "invalid_api_key")),
        "overflow": Reply.error(
            400,
            _openai_error(
                "invalid_request_error", "maximum context length is 128000 tokens", "context_length_exceeded"
            ),
        ),
    },
}
CUT = {"anthropic": "stream_cut_no_stop", "openai": "stream_cut_no_finish"}


@pytest.fixture
def work(wire_project) -> Path:
    project = wire_project()
    (project / "README.md").write_text("# Demo\n\nA tiny project.\n")
    (project / "G.md").write_text("# Look at the README\n")
    return project


def _run(vendor: str) -> tuple[int, list[dict], str]:
    result = CliRunner().invoke(
        app, ["run", "--goal", "G.md", "--model", MODELS[vendor], "--json"], catch_exceptions=False
    )
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return result.exit_code, events, result.stderr


def _session_ok(work: Path, events: list[dict]) -> None:
    sid = events[0]["session_id"]
    session, repairs = Session.open(work / ".arreio" / "sessions" / f"{sid}.jsonl", repair=False)
    assert repairs == [] and check_pairing(session.messages) == []


@pytest.mark.parametrize("vendor", list(MODELS))
def test_multi_turn_tool_use_through_the_sdk(vendor: str, work: Path, server) -> None:
    server.push(Reply.stream(vendor, "tool_call"), Reply.stream(vendor, "text_only"))
    code, events, stderr = _run(vendor)
    assert code == 0, stderr
    ends = [e for e in events if e["type"] == "tool_end"]
    assert [e["name"] for e in ends] == ["read_file"] and not ends[0]["is_error"]
    assert events[-1]["final_text"] and events[-1]["input_tokens"] > 0
    # the second request carried the tool result back to the model
    second = json.dumps(server.seen[1].body)
    assert "A tiny project." in second
    _session_ok(work, events)
    report = json.loads((work / events[-1]["report_path"]).read_text())
    assert report["model"] == MODELS[vendor] and report["cost_usd"] is not None


@pytest.mark.parametrize("vendor", list(MODELS))
@pytest.mark.parametrize("fault", ["429", "500", "529", "cut"])
def test_retryable_faults_are_retried(vendor: str, fault: str, work: Path, server) -> None:
    first = Reply.stream(vendor, CUT[vendor]) if fault == "cut" else FAULTS[vendor][fault]
    server.push(first, Reply.stream(vendor, "text_only"))
    code, events, stderr = _run(vendor)
    assert code == 0, stderr
    assert [e["type"] for e in events].count("retry") == 1
    assert len(server.seen) == 2  # the SDK did not retry on its own; the harness did, once
    _session_ok(work, events)


@pytest.mark.parametrize("vendor", list(MODELS))
def test_auth_failure_stops_at_once_exit_5(vendor: str, work: Path, server) -> None:
    server.push(FAULTS[vendor]["401"], Reply.stream(vendor, "text_only"))
    code, events, _ = _run(vendor)
    assert code == 5 and len(server.seen) == 1
    assert "credentials" in events[-1]["message"]
    _session_ok(work, events)


@pytest.mark.parametrize("vendor", list(MODELS))
def test_context_overflow_fails_clearly(vendor: str, work: Path, server) -> None:
    server.push(FAULTS[vendor]["overflow"], Reply.stream(vendor, "text_only"))
    code, events, _ = _run(vendor)
    assert code == 1 and "context window" in events[-1]["message"]
    _session_ok(work, events)


def test_missing_key_names_the_variable(work: Path, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = CliRunner().invoke(app, ["run", "--goal", "G.md", "--model", MODELS["anthropic"]])
    assert result.exit_code == 5 and "ANTHROPIC_API_KEY" in result.stderr
    assert not (work / ".arreio" / "sessions").exists()  # failed before a session was made


def test_thinking_on_signed_and_redacted_blocks_go_back_with_the_tool_result(work: Path, server) -> None:
    (work / ".arreio" / "config.yaml").write_text("thinking: 2048\nretry:\n  base_delay_s: 0.01\n")
    server.push(Reply.stream("anthropic", "redacted_thinking_tool_call"), Reply.stream("anthropic", "text_only"))
    code, events, stderr = _run("anthropic")
    assert code == 0, stderr
    assert server.seen[0].body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    # Continuing a tool-use turn with thinking on, the API wants the turn's blocks back verbatim.
    assistant = server.seen[1].body["messages"][1]
    assert [b["type"] for b in assistant["content"]] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert assistant["content"][0]["signature"] == "EqQBCkgIARABGAIiQL2sig1111base64signatureBBBB=="
    assert assistant["content"][1]["data"].startswith("EmwKAhgBEgy3va3pzix")
    _session_ok(work, events)


def test_a_thinking_budget_that_does_not_fit_is_a_config_error(work: Path, server) -> None:
    (work / ".arreio" / "config.yaml").write_text("thinking: 512\n")
    code, _, stderr = _run("anthropic")
    assert code == 5 and "thinking budget 512 must be at least 1024" in stderr and server.seen == []

"""Fallback models through the real SDKs: Claude answers with signed thinking and a tool call, then
keeps answering 529; `arreio run --fallback-model openai/gpt-5` goes on through OpenAI's Responses
API, which gets Claude's thinking as text — never its signature."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from provider_fakes import Reply
from typer.testing import CliRunner

from arreio.cli.app import app
from arreio.engine.walls.audit import AuditJournal

SIGNATURE = "EqQBCkgIARABGAIiQL2sig0000base64signatureAAAA=="
OVERLOADED = Reply.error(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})


@pytest.fixture
def work(wire_project) -> Path:
    # a local server stands in for OpenAI: the Responses API is asked for by name; a loopback server
    # bills nothing, so the models are priced in config as the vendors would
    project = wire_project(
        "retry:\n  max_attempts: 2\n  base_delay_s: 0.01\n  max_delay_s: 0.05\nopenai:\n  api: responses\n"
        "prices:\n  anthropic/claude-sonnet-4-5: {input: 3, output: 15}\n"
        "  openai/gpt-5: {input: 1.25, output: 10}\n"
    )
    (project / "x.py").write_text("print('x')\n")
    return project


def test_529_after_the_retries_switches_to_openai_and_downgrades_claudes_thinking(work: Path, server) -> None:
    server.push(
        Reply.stream("anthropic", "thinking_signature"),
        OVERLOADED,
        OVERLOADED,
        Reply.stream("openai_responses", "text"),
    )
    result = CliRunner().invoke(
        app,
        ["run", "Look at x.py", "--model", "anthropic/claude-sonnet-4-5", "--fallback-model", "openai/gpt-5", "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    switches = [e for e in events if e["type"] == "model_switch"]
    assert len(switches) == 1
    assert switches[0]["from"] == "anthropic/claude-sonnet-4-5" and switches[0]["to"] == "openai/gpt-5"
    assert "overloaded_error" in switches[0]["reason"]
    assert events[-1]["final_text"] == "Hello, world."
    assert [s.path for s in server.seen] == ["/v1/messages"] * 3 + ["/responses"]
    sent = server.seen[3].body
    items = sent["input"]
    assert SIGNATURE not in json.dumps(sent)  # Claude's signed thinking is not OpenAI's to verify
    assert not [i for i in items if i.get("type") == "reasoning"]
    assistant = next(i for i in items if i.get("role") == "assistant")
    assert assistant["content"].startswith("<thinking>\nThe user wants a file. I will read it.\n</thinking>")
    call = next(i for i in items if i.get("type") == "function_call")
    output = next(i for i in items if i.get("type") == "function_call_output")
    assert call["call_id"] == output["call_id"] and "print('x')" in output["output"]
    journal = [e for e in AuditJournal(work / ".arreio", redactor=None).entries() if e["kind"] == "model_switch"]
    assert [(e["payload"]["from"], e["payload"]["to"]) for e in journal] == [
        ("anthropic/claude-sonnet-4-5", "openai/gpt-5")
    ]
    report = json.loads((work / events[-1]["report_path"]).read_text())
    assert set(report["cost_by_model"]) == {"anthropic/claude-sonnet-4-5", "openai/gpt-5"}
    assert report["cost_by_model"]["openai/gpt-5"]["input_tokens"] == 30


def test_a_401_never_switches(work: Path, server) -> None:
    server.push(
        Reply.error(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
        Reply.stream("openai_responses", "text"),
    )
    result = CliRunner().invoke(
        app,
        ["run", "Look at x.py", "--model", "anthropic/claude-sonnet-4-5", "--fallback-model", "openai/gpt-5", "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 5
    assert [s.path for s in server.seen] == ["/v1/messages"]
    assert '"model_switch"' not in result.stdout

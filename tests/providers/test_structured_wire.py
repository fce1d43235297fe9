"""Structured output (`--output-schema`) through the REAL openai and anthropic SDKs against a local
wire server (raw SSE fixtures under fixtures/sse/*/structured_*.sse, answer_tool_*.sse): the request
carries the schema natively (OpenAI `response_format`, Anthropic `output_config`) or as the `answer`
tool (older Claude models); valid first time; invalid, then repaired; invalid twice → exit 1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from provider_fakes import Reply
from typer.testing import CliRunner

from arreio.cli.app import app
from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing
from tests.conftest import run_cli

SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "count": {"type": "integer", "minimum": 0}},
    "required": ["title", "count"],
    "additionalProperties": False,
}
VALUE = {"title": "Demo", "count": 2}
NATIVE = {"openai": "openai/gpt-4o", "anthropic": "anthropic/claude-sonnet-4-5"}
TOOL_ROUTE = "anthropic/claude-3-5-sonnet-20241022"  # no JSON outputs: the answer tool


@pytest.fixture
def work(wire_project) -> Path:
    project = wire_project()
    (project / "schema.json").write_text(json.dumps(SCHEMA))
    return project


def _run(model: str, *extra: str) -> tuple[int, list[dict], str]:
    result = CliRunner().invoke(
        app,
        [
            "run",
            "Name the project and count its files",
            "--model",
            model,
            "--output-schema",
            "schema.json",
            "--json",
            *extra,
        ],
        catch_exceptions=False,
    )
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return result.exit_code, events, result.stderr


def _report(work: Path, events: list[dict]) -> dict:
    return json.loads((work / events[-1]["report_path"]).read_text())


def _pairing_ok(work: Path, events: list[dict]) -> None:
    session, _ = Session.open(work / ".arreio" / "sessions" / f"{events[0]['session_id']}.jsonl", repair=False)
    assert check_pairing(session.messages) == []


def test_openai_request_carries_the_schema_and_a_valid_answer_lands_everywhere(work: Path, server) -> None:
    server.push(Reply.stream("openai", "structured_valid"))
    code, events, stderr = _run(NATIVE["openai"])
    assert code == 0, stderr
    body = server.seen[0].body
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
    }
    done = events[-1]
    assert done["type"] == "done" and done["final_json"] == VALUE and json.loads(done["final_text"]) == VALUE
    assert [e["final_json"] for e in events if e["type"] == "unit_end"] == [VALUE]
    assert _report(work, events)["final_json"] == VALUE
    assert len(server.seen) == 1  # valid first time: no repair turn


def test_a_schema_outside_openais_strict_subset_is_sent_with_strict_false(work: Path, server) -> None:
    loose = {
        "type": "object",
        "properties": {"title": {"type": "string"}, "count": {"type": "integer"}},
        "required": ["title"],
    }
    (work / "schema.json").write_text(json.dumps(loose))
    server.push(Reply.stream("openai", "structured_valid"))
    code, events, stderr = _run(NATIVE["openai"])
    assert code == 0, stderr
    assert server.seen[0].body["response_format"]["json_schema"]["strict"] is False
    assert events[-1]["final_json"] == VALUE


def test_anthropic_request_carries_output_config(work: Path, server) -> None:
    server.push(Reply.stream("anthropic", "structured_valid"))
    code, events, stderr = _run(NATIVE["anthropic"])
    assert code == 0, stderr
    body = server.seen[0].body
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    assert fmt["schema"]["properties"]["title"] == {"type": "string"}  # fitted by the SDK's transform_schema …
    assert "minimum" not in fmt["schema"]["properties"]["count"]  # … which moves what the API lacks into text
    assert all(t["name"] != "answer" for t in body.get("tools", []))
    assert events[-1]["final_json"] == VALUE


@pytest.mark.parametrize("vendor", list(NATIVE))
def test_an_invalid_answer_gets_one_repair_turn_with_the_errors(vendor: str, work: Path, server) -> None:
    server.push(Reply.stream(vendor, "structured_invalid"), Reply.stream(vendor, "structured_valid"))
    code, events, stderr = _run(NATIVE[vendor])
    assert code == 0, stderr
    assert len(server.seen) == 2
    messages = server.seen[1].body["messages"]
    last = messages[-1]
    note = last["content"] if isinstance(last["content"], str) else last["content"][0]["text"]
    assert last["role"] == "user" and "not valid against the required output schema" in note
    assert "at $.count: 'two' is not of type 'integer'" in note
    assert events[-1]["final_json"] == VALUE and events[-1]["verdict"] == "success"
    assert events[-1]["steps"] == 2
    _pairing_ok(work, events)


def test_the_tool_route_offers_the_answer_tool_and_repairs_through_its_result(work: Path, server) -> None:
    server.push(Reply.stream("anthropic", "answer_tool_invalid"), Reply.stream("anthropic", "answer_tool_valid"))
    code, events, stderr = _run(TOOL_ROUTE)
    assert code == 0, stderr
    first = server.seen[0].body
    assert "output_config" not in first
    answer = next(t for t in first["tools"] if t["name"] == "answer")
    assert answer["input_schema"] == SCHEMA
    second = server.seen[1].body["messages"][-1]["content"][0]
    assert second["type"] == "tool_result" and second["is_error"] is True
    assert "at $: 'count' is a required property" in second["content"]
    assert len(server.seen) == 2  # the valid call ends the unit: no turn after it
    assert events[-1]["final_json"] == VALUE
    _pairing_ok(work, events)


def test_output_text_prints_the_json_value(work: Path, server) -> None:
    server.push(Reply.stream("openai", "structured_valid"))
    result = CliRunner().invoke(
        app,
        ["run", "Name it", "--model", NATIVE["openai"], "--output-schema", "schema.json", "--output", "text"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == VALUE


def test_invalid_twice_fails_the_run_with_exit_1(work: Path, server) -> None:
    """A real process: the exit code is the one a script sees."""
    server.push(Reply.stream("openai", "structured_invalid"), Reply.stream("openai", "structured_invalid"))
    env = {**os.environ, "HOME": str(work / "home"), "ARREIO_BASE_URL": server.url, "OPENAI_API_KEY": "test-key"}
    out = run_cli(
        work, env, "run", "Name it", "--model", NATIVE["openai"], "--output-schema", "schema.json", "--output", "text"
    )
    assert out.returncode == 1, out.stderr
    assert out.stdout == ""  # no answer is printed for a failed run
    assert (
        out.stderr.strip()
        .splitlines()[-1]
        .startswith("arreio: error: the final answer is not valid against the output schema after a repair turn")
    )
    assert "'two' is not of type 'integer'" in out.stderr
    assert len(server.seen) == 2


def test_the_responses_api_request_carries_text_format(work: Path, server) -> None:
    """OpenAI itself is spoken to through the Responses API (`openai.api: responses` forces it here):
    the schema goes as `text.format`. The recorded reply is prose, so the run fails — honestly."""
    (work / ".arreio" / "config.yaml").write_text("retry:\n  base_delay_s: 0.01\nopenai:\n  api: responses\n")
    server.push(Reply.stream("openai_responses", "text"), Reply.stream("openai_responses", "text"))
    code, events, _ = _run("openai/gpt-5")
    assert server.seen[0].path.endswith("/responses")
    assert server.seen[0].body["text"]["format"] == {
        "type": "json_schema",
        "name": "answer",
        "schema": SCHEMA,
        "strict": True,
    }
    assert code == 1 and events[-1]["final_json"] is None


def test_config_can_force_the_tool_route_for_a_compatible_server(work: Path, server) -> None:
    """`structured_output: tool`: no `response_format` (a server without json_schema would refuse it);
    the `answer` tool carries the schema and its call ends the run."""
    (work / ".arreio" / "config.yaml").write_text("retry:\n  base_delay_s: 0.01\nstructured_output: tool\n")
    server.push(Reply.stream("openai", "answer_tool_valid"))
    code, events, stderr = _run(NATIVE["openai"])
    assert code == 0, stderr
    body = server.seen[0].body
    assert "response_format" not in body
    assert next(t for t in body["tools"] if t["function"]["name"] == "answer")["function"]["parameters"] == SCHEMA
    assert events[-1]["final_json"] == VALUE and len(server.seen) == 1

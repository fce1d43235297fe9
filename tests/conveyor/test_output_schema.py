"""Structured output beyond the wire: plan units' `output_schema`, bad schemas (exit 2, one line), the
offline model's honest minimal value, non-object schemas, and the pure pieces (answer check, strict
subset, minimal instances). The wire-level tests are tests/providers/test_structured_wire.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arreio.engine.loop.answer import AnswerCheck, parse_json
from arreio.engine.providers.offline.schema import minimal_instance, schema_answer
from arreio.engine.providers.structured import is_strict, route_for, wire_schema
from tests.conftest import isolate

VERDICT = {
    "type": "object",
    "properties": {"covered": {"type": "boolean"}, "missing": {"type": "array", "items": {"type": "string"}}},
    "required": ["covered", "missing"],
    "additionalProperties": False,
}


@pytest.fixture
def cli():
    from typer.testing import CliRunner

    from arreio.cli.app import app

    return lambda *args: CliRunner().invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    isolate(monkeypatch, tmp_path / "home", folder)
    (folder / "notes.md").write_text("# Notes\n\nThe build is green.\n")
    return folder


def _events(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def _script(work: Path, replies: list[dict]) -> str:
    (work / "script.json").write_text(json.dumps(replies))
    return "script.json"


# -- plans ----------------------------------------------------------------------------------------
def test_each_plan_unit_meets_its_own_schema_and_the_last_is_the_runs_answer(work: Path, cli) -> None:
    (work / "schemas").mkdir()
    (work / "schemas" / "verdict.json").write_text(json.dumps(VERDICT))
    (work / "plan.yaml").write_text(
        "units:\n"
        "  - id: gather\n    goal: List the facts in notes.md.\n"
        "    output_schema: {type: array, items: {type: string}, minItems: 1}\n"
        "  - id: judge\n    goal: Say whether the notes cover the build.\n    needs: [gather]\n"
        "    output_schema: schemas/verdict.json\n"
    )
    replies = [
        {"text": '["The build is green."]'},
        {"text": '{"covered": "yes"}'},  # invalid: the repair turn follows
        {"text": '{"covered": true, "missing": []}'},
    ]
    result = cli("run", "--plan", "plan.yaml", "--script", _script(work, replies), "--json")
    assert result.exit_code == 0, result.output
    events = _events(result)
    ends = {e["unit_id"]: e for e in events if e["type"] == "unit_end"}
    assert ends["gather"]["final_json"] == ["The build is green."]  # a non-object schema, answered bare
    assert ends["judge"]["final_json"] == {"covered": True, "missing": []}
    assert ends["judge"]["steps"] == 2
    assert events[-1]["final_json"] == {"covered": True, "missing": []}


def test_output_schema_flag_applies_to_the_plans_last_unit(work: Path, cli) -> None:
    (work / "verdict.json").write_text(json.dumps(VERDICT))
    (work / "plan.yaml").write_text("units:\n  - id: a\n    goal: Look.\n  - id: b\n    goal: Judge.\n    needs: [a]\n")
    replies = [{"text": "I looked."}, {"text": '{"covered": false, "missing": ["tests"]}'}]
    result = cli(
        "run",
        "--plan",
        "plan.yaml",
        "--script",
        _script(work, replies),
        "--output-schema",
        "verdict.json",
        "--output",
        "text",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"covered": False, "missing": ["tests"]}


@pytest.mark.parametrize(
    ("schema_yaml", "expected"),
    [
        ("{type: objekt}", "plan.yaml:4: units.0.output_schema: not a valid JSON Schema:"),
        ("missing.json", "plan.yaml:4: units.0.output_schema: output schema missing.json: no such file"),
        ("[1, 2]", "plan.yaml:4: units.0.output_schema:"),
    ],
)
def test_a_bad_unit_schema_is_one_line_naming_the_plan_line(work: Path, cli, schema_yaml: str, expected: str) -> None:
    (work / "plan.yaml").write_text(f"units:\n  - id: a\n    goal: Look.\n    output_schema: {schema_yaml}\n")
    result = cli("run", "--plan", "plan.yaml", "--offline")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and expected in result.stderr, result.stderr
    assert not (work / ".arreio" / "sessions").exists() or not list((work / ".arreio" / "sessions").iterdir())


# -- the flag ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "output schema s.json: no such file"),
        ("{not json", "output schema s.json:1: not JSON:"),
        ('{"type": "objekt"}', "output schema s.json: not a valid JSON Schema:"),
        ('{"properties": {"a": {"minLength": -1}}}', "(at $.properties.a.minLength)"),
        ("true", "output schema s.json: an output schema is a JSON object, not bool"),
    ],
)
def test_a_bad_schema_file_is_exit_2_with_one_line(work: Path, cli, content: str | None, expected: str) -> None:
    if content is not None:
        (work / "s.json").write_text(content)
    result = cli("run", "Read notes.md", "--offline", "--output-schema", "s.json")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and expected in result.stderr, result.stderr
    assert "Traceback" not in result.output


# -- offline -------------------------------------------------------------------------------------
def test_offline_gives_a_minimal_valid_value_whose_summary_is_its_own_answer(work: Path, cli) -> None:
    schema = {
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "files": {"type": "array", "items": {"type": "string"}},
            "risk": {"enum": ["low", "high"]},
            "score": {"type": "integer", "minimum": 1, "maximum": 5},
        },
        "required": ["summary", "files", "risk", "score"],
    }
    (work / "s.json").write_text(json.dumps(schema))
    result = cli("run", "Read notes.md and say what it says", "--offline", "--output-schema", "s.json", "--json")
    assert result.exit_code == 0, result.output
    value = _events(result)[-1]["final_json"]
    assert value["files"] == [] and value["risk"] == "low" and value["score"] == 1
    assert "read notes.md" in value["summary"]  # the offline model's own account, not an invented fact


def test_offline_says_no_where_it_cannot_build_a_value(work: Path, cli) -> None:
    (work / "s.json").write_text(
        json.dumps(
            {"type": "object", "properties": {"id": {"type": "string", "pattern": "^T-[0-9]+$"}}, "required": ["id"]}
        )
    )
    result = cli("run", "Read notes.md", "--offline", "--output-schema", "s.json", "--json")
    assert result.exit_code == 1
    done = _events(result)[-1]
    assert done["final_json"] is None and "after a repair turn" in done["message"]


# -- the pure pieces -----------------------------------------------------------------------------
def test_answer_check_repairs_once_then_fails() -> None:
    check = AnswerCheck(VERDICT, "openai/gpt-4o")
    assert check.request_schema == VERDICT and check.tool() is None
    first = check.judge_text('{"covered": 1}')
    assert first.kind == "repair" and "at $.covered: 1 is not of type 'boolean'" in first.message
    assert "'missing' is a required property" in first.message
    assert check.judge_text("not json").kind == "fail"
    assert AnswerCheck(VERDICT, "offline").judge_text('```json\n{"covered": true, "missing": []}\n```').kind == "accept"


def test_formats_are_checked() -> None:
    check = AnswerCheck({"type": "string", "format": "date"}, "offline")
    assert check.judge_text('"2026-12-02"').kind == "accept"
    assert check.judge_text('"yesterday"').kind == "repair"


def test_the_tool_route_and_wrapping() -> None:
    check = AnswerCheck({"type": "array", "items": {"type": "integer"}}, "anthropic/claude-3-5-sonnet-20241022")
    assert check.route == "tool" and check.request_schema is None
    assert check.wire["properties"]["value"] == {"type": "array", "items": {"type": "integer"}}
    assert check.judge_text('{"value": [1, 2]}') == check.judge_text("[1, 2]")
    assert route_for("anthropic/claude-sonnet-4-5") == "native" and route_for("claude-3-7-sonnet-latest") == "tool"
    assert route_for("litellm/anthropic/claude-3-5-sonnet") == "native"  # litellm maps it itself


def test_strict_subset() -> None:
    assert is_strict(VERDICT)
    assert not is_strict({**VERDICT, "required": ["covered"]})
    assert not is_strict(
        {
            "type": "object",
            "properties": {"a": {"type": "object", "properties": {}}},
            "required": ["a"],
            "additionalProperties": False,
        }
    )  # the inner object is open
    wrapped, was = wire_schema({"type": "string"})
    assert was and is_strict(wrapped)


@pytest.mark.parametrize(
    "schema",
    [
        {
            "type": "object",
            "properties": {"n": {"type": "number", "exclusiveMinimum": 2, "multipleOf": 0.5}},
            "required": ["n"],
        },
        {"type": "array", "items": {"type": "string", "minLength": 3}, "minItems": 2},
        {
            "$defs": {"x": {"type": "integer", "minimum": -5, "maximum": -1}},
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/x"}},
            "required": ["x"],
        },
        {"anyOf": [{"type": "string", "pattern": "^a$"}, {"type": "null"}]},
        {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"const": 3}}, "required": ["b"]},
            ]
        },
        {"type": ["null", "string"], "format": "email"},
    ],
)
def test_minimal_instances_are_valid(schema: dict) -> None:
    from jsonschema import FormatChecker, validators

    value = json.loads(schema_answer(schema, "prose"))
    assert validators.validator_for(schema)(schema, format_checker=FormatChecker()).is_valid(value)
    assert value == minimal_instance(schema, "prose")


def test_parse_json_takes_the_whole_text_or_one_fence_only() -> None:
    assert parse_json(' {"a": 1}\n') == {"a": 1}
    assert parse_json("```\n[1]\n```") == [1]
    with pytest.raises(ValueError):
        parse_json('Here it is: {"a": 1}')


def test_the_schema_is_kept_with_the_session_across_an_approval(work: Path, cli) -> None:
    """Paused for approval, then `arreio approve`: the resumed run still checks (and repairs) the answer."""
    (work / "s.json").write_text(json.dumps(VERDICT))
    (work / "s.yaml").write_text(
        "- tool_calls: [{name: shell, arguments: {command: 'echo ran'}}]\n"
        "- text: 'All done.'\n"  # not JSON: the repair turn follows, after the approval
        '- text: \'{"covered": true, "missing": []}\'\n'
    )
    first = cli("run", "Check the notes", "--script", "s.yaml", "--output-schema", "s.json", "--json")
    assert first.exit_code == 3, first.output
    sid = _events(first)[0]["session_id"]
    second = cli("approve", sid, "--script", "s.yaml", "--json")
    assert second.exit_code == 0, second.output
    done = _events(second)[-1]
    assert done["final_json"] == {"covered": True, "missing": []}

"""Structured output: the final answer must be a JSON value valid against a JSON Schema
(`arreio run --output-schema FILE`, a plan unit's `output_schema`).

The server checks, the model does not promise (invariant 6): whatever the provider did to constrain
the answer (engine/providers/structured.py picks the route), the harness validates it here with
`jsonschema`. An invalid answer gets one repair turn — the model is told the validation errors and
answers again; still invalid, the unit fails (exit 1) saying why. A valid value ends the unit:
`unit_end.final_json` / `done.final_json` / the report carry it, and `final_text` is its JSON.

Routes: `native` — the schema rides on the request and the answer is the reply's text; `tool` — a
final `answer` tool (its input schema is the wire schema) whose arguments are the answer; a call of
it ends the unit without another model turn. Text where a call was expected is still judged.

`jsonschema` is imported on first use (it costs ~0.2 s that `arreio --help` must not pay).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from arreio.engine.core.errors import UsageError
from arreio.engine.core.nesting import json_loads
from arreio.engine.providers.structured import FORMAT_NAME, WRAP_KEY, route_for, wire_schema
from arreio.engine.tools.base import Tool, ToolResult

MAX_ERRORS = 5
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*?)\n```\s*$", re.DOTALL)
REPAIR = (
    "[arreio] Your final answer is not valid against the required output schema:\n{errors}\n"
    "{how} This is the one repair turn: a second invalid answer fails the run."
)
HOW_NATIVE = "Answer again with only the corrected JSON value, nothing around it."
HOW_TOOL = f"Call the `{FORMAT_NAME}` tool again with corrected arguments."


# -- the schema ---------------------------------------------------------------------------------
def check_schema(schema: Any, where: str) -> dict[str, Any]:
    """`schema` if it is a usable JSON Schema (an object), else one UsageError naming `where`."""
    if not isinstance(schema, dict):
        raise UsageError(f"{where}: an output schema is a JSON object, not {type(schema).__name__}")
    from jsonschema import exceptions, validators

    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as error:
        at = _path(error.absolute_path)
        raise UsageError(
            f"{where}: not a valid JSON Schema: {_clip(error.message)}" + (f" (at {at})" if at != "$" else "")
        ) from None
    return schema


def load_schema(path: Path, shown: str | None = None) -> dict[str, Any]:
    """Read and check a schema file (JSON; YAML for `.yaml`/`.yml`); a problem is one UsageError."""
    from arreio.engine.core.regular_file import Limit, read_text

    shown = shown or str(path)
    if path.is_dir():
        raise UsageError(f"output schema {shown}: is a folder")
    if not path.exists():
        raise UsageError(f"output schema {shown}: no such file")
    if path.suffix.lower() in (".yaml", ".yml"):
        from arreio.engine.core.yaml_file import read_yaml

        data = read_yaml(path, error=UsageError, what="output schema", shown=shown, limit=Limit.PLAN)
        return check_schema(data, f"output schema {shown}")
    try:
        text = read_text(path, limit=Limit.PLAN, encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(
            f"output schema {shown}: cannot read it ({getattr(error, 'strerror', None) or error})"
        ) from None
    try:
        data = json_loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"output schema {shown}:{error.lineno}: not JSON: {error.msg}") from None
    return check_schema(data, f"output schema {shown}")


# -- judging an answer --------------------------------------------------------------------------
@dataclass(frozen=True)
class Judgement:
    """accept: `value` is the answer; repair: `message` goes back to the model; fail: the unit fails."""

    kind: Literal["accept", "repair", "fail"]
    value: Any = None
    message: str = ""


class AnswerCheck:
    """One unit's answer against `schema`, for `model`. Holds the one repair turn and, on the tool
    route, the `answer` tool's outcome until the runner reads it (`settled`)."""

    def __init__(self, schema: dict[str, Any], model: str, mode: str = "auto") -> None:
        from jsonschema import FormatChecker, validators

        self.schema, self.route = schema, route_for(model, mode)
        self.wire, self.wrapped = wire_schema(schema)
        self.validator = validators.validator_for(schema)(schema, format_checker=FormatChecker())
        self.repairs_left = 1
        self.settled: Judgement | None = None  # the answer tool's accept or fail, for the runner

    @property
    def request_schema(self) -> dict[str, Any] | None:
        """What the request carries (`ModelRequest.output_schema`): the native route only."""
        return self.wire if self.route == "native" else None

    def tool(self) -> Tool | None:
        return AnswerTool(self) if self.route == "tool" else None

    def judge_text(self, text: str) -> Judgement:
        """A reply without tool calls: its text must be the JSON value (a fenced block is accepted)."""
        how = HOW_NATIVE if self.route == "native" else HOW_TOOL
        try:
            value = parse_json(text)
        except ValueError as error:
            return self._refuse([f"the answer is not JSON ({error})"], how)
        if self.wrapped and isinstance(value, dict) and set(value) == {WRAP_KEY}:
            value = value[WRAP_KEY]
        return self.judge_value(value, how=how)

    def judge_value(self, value: Any, *, how: str = HOW_NATIVE) -> Judgement:
        problems = self.errors(value)
        return Judgement("accept", value) if not problems else self._refuse(problems, how)

    def errors(self, value: Any) -> list[str]:
        """Up to MAX_ERRORS validation errors, each "at $.path: message", in document order."""
        found = sorted(self.validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
        lines = [f"at {_path(e.absolute_path)}: {_clip(e.message)}" for e in found[:MAX_ERRORS]]
        if len(found) > MAX_ERRORS:
            lines.append(f"and {len(found) - MAX_ERRORS} more")
        return lines

    def _refuse(self, problems: list[str], how: str) -> Judgement:
        listed = "\n".join(f"- {p}" for p in problems)
        if self.repairs_left > 0:
            self.repairs_left -= 1
            return Judgement("repair", message=REPAIR.format(errors=listed, how=how))
        return Judgement(
            "fail",
            message="the final answer is not valid against the output schema after a repair "
            "turn: " + "; ".join(problems),
        )


def parse_json(text: str) -> Any:
    """The JSON value `text` is: the whole of it, or one fenced block (```json … ```) that is all of it."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body:
        raise ValueError("the reply is empty")
    try:
        return json_loads(body)
    except json.JSONDecodeError as error:
        raise ValueError(f"{error.msg} at line {error.lineno} column {error.colno}") from None


def answer_text(value: Any) -> str:
    """The final text of a structured answer: its JSON, indented."""
    return json.dumps(value, ensure_ascii=False, indent=2)


# -- the tool route -------------------------------------------------------------------------------
class _AnyArgs(BaseModel):
    model_config = ConfigDict(extra="allow")  # the schema is the user's: the check below judges it


class AnswerTool(Tool):
    """The final `answer` tool of the tool route. A valid call settles the unit (the runner ends it
    after the round); an invalid one is an error result listing what is wrong (the repair), then a
    failure. It changes nothing, so checkpoints skip it."""

    name = FORMAT_NAME
    description = (
        "Give your final answer. Call this once, when the work is done, with the answer as the "
        "arguments; they must follow this tool's input schema exactly."
    )
    input_model = _AnyArgs
    read_only = True
    repeat = "few"

    def __init__(self, check: AnswerCheck) -> None:
        self.check = check

    def input_schema(self) -> dict[str, Any]:  # type: ignore[override]
        return self.check.wire

    async def execute(self, args: Any, ctx: Any) -> ToolResult:
        value = args.model_dump() if isinstance(args, BaseModel) else dict(args)
        if self.check.wrapped:
            value = value.get(WRAP_KEY)
        verdict = self.check.judge_value(value, how=HOW_TOOL)
        if verdict.kind == "accept":
            self.check.settled = verdict
            return ToolResult("accepted: this is the final answer")
        if verdict.kind == "fail":
            self.check.settled = verdict
        return ToolResult(verdict.message, is_error=True)


def _path(parts: Any) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _clip(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

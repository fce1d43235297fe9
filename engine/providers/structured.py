"""What each model family is sent for structured output (`--output-schema`): pure translations.

`ModelRequest.output_schema` holds the *wire* schema (see `wire_schema`: an object at the root, the
user's schema wrapped under `value` when it is not one, because both vendors want an object there).
Who constrains the answer:

- `native` — the provider is told the schema and the answer is the reply's text: OpenAI Chat
  Completions (and compatible servers) `response_format: {type: json_schema, json_schema: {...}}`,
  `strict` only when the schema meets OpenAI's strict subset (else it is guidance the harness
  checks); Anthropic `output_config: {format: {type: json_schema, schema}}` for the Claude models
  that have it (the SDK's own `transform_schema` fits the schema to what the API accepts: what it
  cannot express moves into descriptions — the harness still validates against the user's schema);
  litellm passes `response_format` on to whatever it talks to; the offline and scripted models read
  the schema from the request.
- `tool` — older Claude models: a final `answer` tool whose input schema is the wire schema.

Whichever route, the harness validates the answer itself (engine/loop/answer.py).
"""

from __future__ import annotations

import re
from typing import Any, Literal

Route = Literal["native", "tool"]
WRAP_KEY = "value"
FORMAT_NAME = "answer"

# claude-<family>-<major>[-<minor>]: a minor is one or two digits (a date suffix has eight)
_CLAUDE = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?!\d)")


def route_for(model: str, mode: str = "auto") -> Route:
    """How structured output is asked of `model` (a full model string: `anthropic/…`, `openai/…`, …);
    `mode` is config `structured_output` (native or tool forces one)."""
    if mode in ("native", "tool"):
        return mode  # type: ignore[return-value]
    direct = model.startswith("anthropic/") or (model.startswith("claude") and "/" not in model)
    if direct and not claude_has_native_output(model):  # (litellm does its own mapping for old Claudes)
        return "tool"
    return "native"


def claude_has_native_output(name: str) -> bool:
    """Claude models with JSON outputs (`output_config.format`): Opus 4.1, and every 4.5 or later."""
    found = _CLAUDE.search(name)
    if found is None:
        return False  # claude-3-5-sonnet-… and other older names
    family, major, minor = found.group(1), int(found.group(2)), int(found.group(3) or 0)
    return (major, minor) >= (4, 5) or (family == "opus" and (major, minor) >= (4, 1))


def wire_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The schema as sent (an object at the root), and whether the user's was wrapped under `value`."""
    if schema.get("type") == "object":
        return schema, False
    wrapped = {
        "type": "object",
        "properties": {WRAP_KEY: schema},
        "required": [WRAP_KEY],
        "additionalProperties": False,
    }
    if "$defs" in schema:  # references stay resolvable from the root
        inner = {k: v for k, v in schema.items() if k != "$defs"}
        wrapped = {**wrapped, "properties": {WRAP_KEY: inner}, "$defs": schema["$defs"]}
    return wrapped, True


def is_strict(schema: Any) -> bool:
    """Whether OpenAI's strict mode would take the schema unchanged: every object closed
    (`additionalProperties: false`) with every property required, and none of the keywords strict
    mode refuses. A schema outside that subset is sent with `strict: false` instead of rewritten."""
    if isinstance(schema, list):
        return all(is_strict(s) for s in schema)
    if not isinstance(schema, dict):
        return True
    if any(
        k in schema
        for k in (
            "patternProperties",
            "if",
            "then",
            "else",
            "not",
            "dependentRequired",
            "dependentSchemas",
            "unevaluatedProperties",
            "propertyNames",
            "oneOf",
            "allOf",
        )
    ):
        return False
    kinds = schema.get("type")
    if kinds == "object" or (isinstance(kinds, list) and "object" in kinds) or "properties" in schema:
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False or set(schema.get("required", [])) != set(props):
            return False
    subs: list[Any] = []
    for key in ("properties", "$defs", "definitions"):
        subs += list((schema.get(key) or {}).values())
    for key in ("items", "anyOf", "prefixItems", "additionalProperties"):
        if isinstance(schema.get(key), (dict, list)):
            subs.append(schema[key])
    return all(is_strict(s) for s in subs)


def openai_response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """Chat Completions' (and litellm's) `response_format` for a wire schema."""
    return {"type": "json_schema", "json_schema": {"name": FORMAT_NAME, "schema": schema, "strict": is_strict(schema)}}


def openai_text_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The Responses API's `text.format` for a wire schema (the same content, flattened)."""
    return {"type": "json_schema", "name": FORMAT_NAME, "schema": schema, "strict": is_strict(schema)}


def anthropic_output_config(schema: dict[str, Any]) -> dict[str, Any]:
    """The Messages API's `output_config` for a wire schema, fitted by the SDK's `transform_schema`
    (a schema it cannot fit is sent as it is: the API's refusal then says why)."""
    import anthropic  # lazy: the adapter calling this has imported it already

    try:
        fitted = anthropic.transform_schema(schema)
    except (ValueError, TypeError):
        fitted = schema
    return {"format": {"type": "json_schema", "schema": fitted}}

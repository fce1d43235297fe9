"""The offline model's answer when the request carries an output schema (`--offline --output-schema`).

The offline model extracts nothing: it cannot read meaning into files. So its structured answer is
the smallest value the schema allows — `const`, the first `enum` choice, a `default`, the lowest
number in range, `false`, empty strings and lists as short as allowed — with one honest exception:
a free-text property named like a summary (`summary`, `answer`, `description`, …) carries the offline
model's own plain answer (what it read and wrote). The value is checked against the schema before
it is given; where no such value can be built (a `pattern`, a `not`, formats it does not know),
the offline model answers in prose as always, and the harness's check says so (one repair turn,
then exit 1) — it never pretends.
"""

from __future__ import annotations

import json
import math
from typing import Any

PROSE_NAMES = ("summary", "answer", "description", "text", "message", "result", "report", "notes", "explanation")
_FORMATS = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00Z",
    "email": "offline@example.invalid",
    "uri": "about:blank",
    "uri-reference": "about:blank",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "hostname": "localhost",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "duration": "P0D",
}
_MAX_DEPTH = 12


class _CannotBuild(Exception):
    """No honest minimal value for this part of the schema."""


def schema_answer(schema: dict[str, Any], prose: str) -> str:
    """The JSON text of a minimal value valid against `schema` (see the module docstring), or
    `prose` unchanged when no such value can be built."""
    try:
        value = minimal_instance(schema, prose)
    except (_CannotBuild, RecursionError):
        return prose
    from jsonschema import FormatChecker, validators  # lazy: only a structured offline run pays for it

    validator = validators.validator_for(schema)(schema, format_checker=FormatChecker())
    if not validator.is_valid(value):
        return prose
    return json.dumps(value, ensure_ascii=False, indent=2)


def minimal_instance(schema: Any, prose: str = "", *, root: Any = None, depth: int = 0, name: str = "") -> Any:
    """The smallest value `schema` allows; a free-text property called `name` in PROSE_NAMES gets `prose`."""
    root = schema if root is None else root
    if depth > _MAX_DEPTH:
        raise _CannotBuild("too deep")
    if schema is True or schema == {}:
        return None
    if not isinstance(schema, dict) or "not" in schema:
        raise _CannotBuild("unsupported")

    def build(sub: Any, key: str = "") -> Any:
        return minimal_instance(sub, prose, root=root, depth=depth + 1, name=key)

    if "$ref" in schema:
        return build(_resolve(schema["$ref"], root), name)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            for option in schema[key]:
                try:
                    return build({**{k: v for k, v in schema.items() if k != key}, **option}, name)
                except _CannotBuild:
                    continue
            raise _CannotBuild(key)
    if schema.get("allOf"):
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = _resolve(part["$ref"], root) if isinstance(part, dict) and "$ref" in part else part
            merged = {
                **merged,
                **part,
                "properties": {**merged.get("properties", {}), **part.get("properties", {})},
                "required": [*merged.get("required", []), *part.get("required", [])],
            }
        return build(merged, name)
    kind = _kind(schema)
    if kind == "object":
        return _object(schema, build)
    if kind == "array":
        items, prefix = schema.get("items", {}), schema.get("prefixItems", [])
        count = max(int(schema.get("minItems", 0)), len(prefix) if schema.get("minItems") else 0)
        return [build(prefix[i]) if i < len(prefix) else build(items) for i in range(count)]
    if kind == "string":
        return _string(schema, prose if name.lower() in PROSE_NAMES else "")
    if kind in ("integer", "number"):
        return _number(schema, kind)
    if kind == "boolean":
        return False
    return None


def _kind(schema: dict[str, Any]) -> str:
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return next((k for k in kinds if k != "null"), "null")
    if kinds:
        return kinds
    if "properties" in schema or "required" in schema:
        return "object"
    if "items" in schema:
        return "array"
    raise _CannotBuild("no type")


def _object(schema: dict[str, Any], build: Any) -> dict[str, Any]:
    props = schema.get("properties", {})
    wanted = list(dict.fromkeys([*schema.get("required", []), *(k for k in props if k.lower() in PROSE_NAMES)]))
    out: dict[str, Any] = {}
    extra = schema.get("additionalProperties", {})
    for key in wanted:
        if key in props:
            out[key] = build(props[key], key)
        elif extra is False:
            raise _CannotBuild("required but not allowed")
        else:
            out[key] = build(extra if isinstance(extra, dict) else {}, key)
    if len(out) < int(schema.get("minProperties", 0)):
        raise _CannotBuild("minProperties")
    return out


def _string(schema: dict[str, Any], text: str) -> str:
    if "pattern" in schema:
        raise _CannotBuild("pattern")
    if fmt := schema.get("format"):
        if fmt not in _FORMATS:
            raise _CannotBuild(f"format {fmt}")
        text = _FORMATS[fmt]
    least, most = int(schema.get("minLength", 0)), schema.get("maxLength")
    if most is not None and len(text) > int(most):
        text = text[: max(0, int(most) - 1)].rstrip() + "…" if int(most) > 1 else text[: int(most)]
    if len(text) < least:
        text = text + "-" * (least - len(text))
    return text


def _number(schema: dict[str, Any], kind: str) -> int | float:
    value: float = 0  # zero when the range holds it, else the bound nearest to it
    if "minimum" in schema and value < schema["minimum"]:
        value = schema["minimum"]
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        value = schema["exclusiveMinimum"] + (1 if kind == "integer" else 0.5)
    if "maximum" in schema and value > schema["maximum"]:
        value = schema["maximum"]
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        value = schema["exclusiveMaximum"] - (1 if kind == "integer" else 0.5)
    if step := schema.get("multipleOf"):
        value = math.ceil(value / step) * step
    return math.ceil(value) if kind == "integer" else value


def _resolve(ref: str, root: Any) -> Any:
    if not ref.startswith("#"):
        raise _CannotBuild("remote $ref")
    node = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise _CannotBuild(f"unresolved {ref}")
        node = node[part]
    return node

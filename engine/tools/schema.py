"""A tool's input schema as the model reads it: pydantic's JSON schema without what only costs tokens.

Every call's request carries every offered tool's schema; a local model on a CPU reads them all before
its first token (11 default tools were 3,250 tokens: ~150 s of prefill for a 1.5B model). The pydantic
model still validates every call (engine/tools/chain.py), so the wire schema keeps only what the model
needs: no `title`s, an optional field as its plain type (not `anyOf: [T, null]` with `default: null`:
leaving it out is how to say null), no `additionalProperties: false`, and no description of the root
(the tool's own description says it). Deterministic: the same model gives the same bytes every turn,
so the prompt's stable prefix stays stable.
"""

from __future__ import annotations

from typing import Any

_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains")


def compact_schema(node: Any, *, root: bool = True) -> Any:
    """`node` (a JSON schema) without titles, null-defaulted `anyOf` nulls and closed-object markers."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" or (key == "additionalProperties" and value is False) or (root and key == "description"):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: compact_schema(sub, root=False) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [compact_schema(sub, root=False) for sub in value]
        elif key in _SCHEMA_VALUES and isinstance(value, dict):
            out[key] = compact_schema(value, root=False)
        else:
            out[key] = value
    variants = out.get("anyOf")
    if isinstance(variants, list) and "default" in out and out["default"] is None:
        kept = [v for v in variants if v != {"type": "null"}]
        if len(kept) == 1 and len(variants) == 2 and isinstance(kept[0], dict):
            return {**kept[0], **{k: v for k, v in out.items() if k not in ("anyOf", "default")}}
    return out

"""What the default tools cost on every model call: a local model on a CPU reads their descriptions and
schemas before its first token. Counted with a real tokenizer (o200k_base, from the BPE file litellm
ships), the whole default set stays within 1,200 tokens, and its bytes do not change between turns."""

from __future__ import annotations

import json
from pathlib import Path

from arreio.cli.commands.doctor_tools import BUDGET, offered_specs
from arreio.engine.core.config import Settings
from arreio.engine.features.resolver import spec_tokens
from arreio.engine.tools.schema import compact_schema

DEFAULT_TOOLS = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "grep",
    "shell",
    "memory",
    "skill_view",
    "skill_manage",
    "web_fetch",
    "delegate",
]


def _specs(tmp_path: Path) -> list:
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    return offered_specs(tmp_path, env, Settings())


def test_the_default_tools_fit_the_budget_counted_by_a_real_tokenizer(tmp_path: Path) -> None:
    specs = _specs(tmp_path)
    assert [s.name for s in specs] == DEFAULT_TOOLS
    tokenizer, counts = spec_tokens(specs)
    assert tokenizer == "o200k_base"  # litellm (a dependency) ships the file: nothing is downloaded
    assert sum(counts.values()) <= BUDGET, counts


def test_the_schemas_are_the_same_bytes_every_time(tmp_path: Path) -> None:
    first = json.dumps([s.model_dump() for s in _specs(tmp_path)])
    assert json.dumps([s.model_dump() for s in _specs(tmp_path)]) == first


def test_compact_schema_keeps_meaning_and_drops_what_only_costs_tokens() -> None:
    schema = {
        "title": "In",
        "description": "root",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "title": {"title": "Title", "type": "string", "description": "a field named title"},
            "n": {
                "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                "default": None,
                "description": "d",
                "title": "N",
            },
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}], "title": "E"},
            "items": {"anyOf": [{"items": {"$ref": "#/$defs/Op"}, "type": "array"}, {"type": "null"}], "default": None},
        },
        "$defs": {
            "Op": {"title": "Op", "description": "kept", "type": "object", "properties": {"a": {"type": "string"}}}
        },
        "required": ["title"],
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "a field named title"},
            "n": {"type": "integer", "minimum": 1, "description": "d"},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "items": {"items": {"$ref": "#/$defs/Op"}, "type": "array"},
        },
        "$defs": {"Op": {"description": "kept", "type": "object", "properties": {"a": {"type": "string"}}}},
        "required": ["title"],
    }

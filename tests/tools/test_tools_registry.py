"""The registry: unique names, registration order, subsets, specs for the model."""

from __future__ import annotations

import pytest

from arreio.engine.core.errors import ConfigError
from arreio.engine.tools.builtin import builtin_tools
from arreio.engine.tools.registry import ToolRegistry

BUILTIN_NAMES = ["read_file", "write_file", "edit_file", "list_dir", "grep", "shell"]


def test_builtins_register_in_order() -> None:
    registry = ToolRegistry(builtin_tools())
    assert registry.names() == BUILTIN_NAMES
    assert len(registry) == 6
    assert [t.name for t in registry] == BUILTIN_NAMES
    assert registry.get("grep").name == "grep"
    assert registry.get("nope") is None


def test_duplicate_name_is_value_error() -> None:
    registry = ToolRegistry(builtin_tools())
    with pytest.raises(ValueError, match="read_file"):
        registry.register(builtin_tools()[0])


def test_specs_carry_schema_and_description() -> None:
    specs = {s.name: s for s in ToolRegistry(builtin_tools()).specs()}
    assert list(specs) == BUILTIN_NAMES
    read = specs["read_file"].input_schema
    assert read["required"] == ["path"]
    assert set(read["properties"]) == {"path", "offset", "limit"}
    assert set(specs["write_file"].input_schema["properties"]) == {"path", "content"}
    assert set(specs["edit_file"].input_schema["properties"]) == {"path", "old", "new"}
    assert set(specs["list_dir"].input_schema["properties"]) == {"path"}
    assert set(specs["grep"].input_schema["properties"]) == {"pattern", "path", "glob"}
    assert set(specs["shell"].input_schema["properties"]) == {"command", "timeout_s"}
    assert all(s.description and "title" not in s.input_schema for s in specs.values())


def test_subset_keeps_registry_order() -> None:
    registry = ToolRegistry(builtin_tools())
    sub = registry.subset(["shell", "read_file"])
    assert sub.names() == ["read_file", "shell"]
    assert len(registry) == 6


def test_subset_with_unknown_name_is_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown tool\\(s\\): fly"):
        ToolRegistry(builtin_tools()).subset(["fly"])


def test_declared_repeat_and_sensitivity() -> None:
    tools = {t.name: t for t in builtin_tools()}
    assert {n: t.repeat for n, t in tools.items()} == {
        "read_file": "per_target",
        "write_file": "per_target",
        "edit_file": "per_target",
        "list_dir": "per_target",
        "grep": "few",
        "shell": "few",
    }
    assert tools["shell"].sensitive and tools["shell"].timeout_s is None
    assert not tools["write_file"].sensitive

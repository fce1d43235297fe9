"""The set of tools a run may call, in the order the model is told about them.

`cli/deps.py` fills one with the built-ins and the feature tools (memory, knowledge, skills);
the pipeline narrows it per run with `subset`. The engine only ever sees this registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from arreio.engine.core.errors import ConfigError
from arreio.engine.core.model_io import ToolSpec
from arreio.engine.tools.base import Tool


class ToolRegistry:
    """Tools by name, in registration order. Names are unique."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._specs: list[ToolSpec] | None = None  # built once: a schema costs ~0.4 ms and is sent every turn
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        """Add `tool`. A second tool with the same name is a wiring bug: `ValueError`."""
        name = tool.name
        if name in self._tools:
            raise ValueError(f"a tool named {name!r} is already registered")
        self._tools[name] = tool
        self._specs = None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        """What the model is told: one `ToolSpec` per tool, in registration order (a fresh list each
        call; the specs themselves are built once — a tool's schema does not change)."""
        if self._specs is None:
            self._specs = [
                ToolSpec(name=t.name, description=t.description, input_schema=t.input_schema())
                for t in self._tools.values()
            ]
        return list(self._specs)

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        """A new registry with only `names`, kept in this registry's order.

        An unknown name is a configuration mistake the user should hear about: `ConfigError`.
        """
        wanted = set(names)
        unknown = sorted(wanted - self._tools.keys())
        if unknown:
            raise ConfigError(f"unknown tool(s): {', '.join(unknown)}; available: {', '.join(self._tools)}")
        return ToolRegistry(t for n, t in self._tools.items() if n in wanted)

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._tools

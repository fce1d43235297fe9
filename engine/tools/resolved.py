"""The set of tools a run offers, and what was learnt while choosing it (the resolver in
`engine/features/resolver.py` fills it): which family each tool is from, why others are not offered,
and what the offered schemas cost in tokens on every model call."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from arreio.engine.core.tokens import estimate_tokens
from arreio.engine.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from arreio.engine.tools.base import Tool


class ResolvedTools(ToolRegistry):
    """The run's registry plus what the resolver learnt on the way.

    - `families`: tool name → family (`builtin` or the feature's name), for offered tools;
    - `unavailable`: tool name → why it is not offered (its prerequisite does not hold);
    - `warnings`: things the user should hear (an allow-listed tool that is unavailable);
    - `schema_tokens`: estimated tokens of the offered schemas, sent with every model call.
    """

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        super().__init__(tools)
        self.families: dict[str, str] = {}
        self.unavailable: dict[str, str] = {}
        self.warnings: list[str] = []
        self.schema_tokens = 0
        # The run's allow/deny selectors, so a tool a family adds mid-run (an MCP server whose tool
        # list changed) passes the same filters as the ones offered at start; None: add nothing.
        self.selectors: tuple[list[str] | None, list[str]] | None = None

    def admits(self, name: str) -> bool:
        """Whether a tool named `name`, appearing mid-run, would have been offered at start."""
        if self.selectors is None:
            return False
        enable, disable = self.selectors
        return (enable is None or matches(name, enable)) and not matches(name, disable)

    def subset(self, names: Iterable[str]) -> ResolvedTools:
        """A narrower set (a sub-agent's), keeping families and recomputing the schema cost."""
        plain = super().subset(names)
        out = ResolvedTools(plain)
        out.families = {n: f for n, f in self.families.items() if n in out}
        out.schema_tokens = schema_tokens(out)
        return out


def schema_tokens(registry: ToolRegistry) -> int:
    """Estimated tokens of the tool definitions a provider sends with each call."""
    specs = [spec.model_dump() for spec in registry.specs()]
    if not specs:
        return 0
    return estimate_tokens(json.dumps(specs, ensure_ascii=False, separators=(",", ":")))


def matches(name: str, selectors: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, s) if is_pattern(s) else name == s for s in selectors)


def is_pattern(name: str) -> bool:
    return any(ch in name for ch in "*?[")

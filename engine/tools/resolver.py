"""The one place a run's tool set is decided (DESIGN.md section 6).

Every family — built-ins, feature tools (memory, skills, knowledge), and later MCP servers, web tools
and sub-agents — enters here and leaves as one `ToolRegistry`, so every call goes through the same
protection chain. Per-run enable/disable comes from config (`tools_enabled`, `tools_disabled`) and
flags (`--tools`, `--no-tools`); an unknown name there is a ConfigError, not a silent no-op.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from arreio.engine.errors import ConfigError
from arreio.engine.tools.builtin import builtin_tools
from arreio.engine.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from arreio.engine.feature import Feature, RunContext


def resolve_tools(
    ctx: RunContext,
    features: Sequence[Feature],
    *,
    enable: Iterable[str] | None = None,
    disable: Iterable[str] = (),
) -> ToolRegistry:
    """All families, then the allow-list (if any), then the deny-list."""
    everything = ToolRegistry(builtin_tools())
    for feature in features:
        for tool in feature.tools(ctx):
            everything.register(tool)
    enable = list(enable) if enable is not None else None
    disable = list(disable)
    unknown = [n for n in (enable or []) + disable if n not in everything]
    if unknown:
        raise ConfigError(f"unknown tool(s) {', '.join(sorted(set(unknown)))}; available: {', '.join(everything.names())}")
    names = [n for n in everything.names() if (enable is None or n in enable) and n not in disable]
    return everything.subset(names)

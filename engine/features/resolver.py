"""The one place a run's tool set is decided (docs/architecture.md section 6).

Every family — built-ins, feature tools (memory, skills, knowledge), MCP servers, web tools and the
sub-agent tool — enters here and leaves as one `ToolRegistry`, so every call goes through the same
protection chain and every hook; no family is called around it.

    families → prerequisites → allow-list (`tools_enabled` / `--tools`) → deny-list → schema tokens

- A family is the built-ins or one `Feature`; each tool's family is remembered for the report.
- A tool may declare a prerequisite: a method `unavailable(ctx) -> str | None` returning why it
  cannot be offered in this run (no search backend configured, sub-agent depth reached). Such a tool
  is left out with its reason; naming it in `--tools` is a warning, not an error.
- Names in the allow/deny lists are exact tool names or shell-style patterns (`github__*`); a name or
  pattern that matches nothing at all is a ConfigError naming it, never a silent no-op — unless it lies
  in a namespace a family owns but could not list in this run: a feature may define
  `absent_namespaces(ctx) -> {prefix: why}` (an MCP server that did not start: `{"fx__": "..."}`), and
  a name or pattern starting with such a prefix is then a warning saying why, not an error.
- The tokens the offered schemas cost on every model call are estimated (`context/tokens.py`) and kept
  on the result, so the report can show what the tool set costs.

After resolving, each feature that defines `tools_resolved(ctx, resolved)` is told the outcome
(that is how the figure reaches a Feature's `after_run` and the RunReport).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from arreio.engine.core.errors import ConfigError, UsageError
from arreio.engine.core.tokens import estimate_tokens
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import RunHook, WarningsHook
from arreio.engine.loop.report import ToolSection, unsaid
from arreio.engine.tools.builtin import builtin_tools
from arreio.engine.tools.resolved import ResolvedTools, is_pattern, matches, schema_tokens
from arreio.engine.tools.run_context import RunContext

if TYPE_CHECKING:
    from arreio.engine.core.model_io import ToolSpec
    from arreio.engine.loop.report import RunReport
    from arreio.engine.tools.base import Tool

BUILTIN_FAMILY = "builtin"


def spec_tokens(specs: Sequence[ToolSpec]) -> tuple[str, dict[str, int]]:
    """Each spec's description plus JSON schema in tokens, and the tokenizer that counted them: OpenAI's
    o200k_base from the BPE file litellm ships (never downloaded), else arreio's estimate."""
    from arreio.engine.core.tokens import bundled_tiktoken

    encoding = bundled_tiktoken("o200k_base") or bundled_tiktoken("cl100k_base")

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=())) if encoding is not None else estimate_tokens(text)

    name = encoding.name if encoding is not None else "arreio's estimate (no tokenizer file installed)"
    return name, {s.name: count(s.description + json.dumps(s.input_schema, ensure_ascii=False)) for s in specs}


def _prerequisite(tool: Tool, ctx: RunContext) -> str | None:
    check = getattr(tool, "unavailable", None)
    if check is None:
        return None
    reason = check(ctx)
    return str(reason) if reason else None


def _literal_prefix(selector: str) -> str:
    cut = min((selector.index(ch) for ch in "*?[" if ch in selector), default=len(selector))
    return selector[:cut]


def excludes_namespace(prefix: str, enable: Sequence[str] | None, disable: Sequence[str]) -> bool:
    """No tool named `prefix…` (an MCP server's `fx__`) can be offered under these selectors, whatever
    its tools turn out to be: a deny pattern covers the whole namespace (`fx__*`, `*`), or an allow-list
    has nothing that could match a name in it. Pure and conservative: on doubt (`*status`), False."""
    for selector in disable:
        head = _literal_prefix(selector)
        if selector == head + "*" and prefix.startswith(head):
            return True
    if enable is None:
        return False
    for selector in enable:
        head = _literal_prefix(selector)
        if head.startswith(prefix) or (is_pattern(selector) and prefix.startswith(head)):
            return False
    return True


def resolve_tools(
    ctx: RunContext,
    features: Sequence[Feature],
    *,
    enable: Iterable[str] | None = None,
    disable: Iterable[str] = (),
    flagged: Iterable[str] = (),
) -> ResolvedTools:
    """All families, then prerequisites, then the allow-list (if any), then the deny-list."""
    candidates: list[tuple[Tool, str]] = [(tool, BUILTIN_FAMILY) for tool in builtin_tools()]
    enable = list(enable) if enable is not None else None
    disable = list(disable)
    for feature in features:
        # told the selectors before it lists its tools: a family can leave out what none could pass
        # (an MCP server whose every tool is excluded is not started: seconds a run, for nothing)
        feature.tools_selected(ctx, enable, disable)
        candidates += [(tool, feature.name) for tool in feature.tools(ctx)]

    offered = ResolvedTools()
    known: list[str] = []
    for tool, family in candidates:
        if tool.name in known:
            raise ValueError(f"a tool named {tool.name!r} is already registered")  # a wiring bug
        known.append(tool.name)
        reason = _prerequisite(tool, ctx)
        if reason:
            offered.unavailable[tool.name] = reason
            continue
        offered.register(tool)
        offered.families[tool.name] = family

    unknown = [s for s in (enable or []) + disable if not any(matches(n, [s]) for n in known)]
    absent = _absent_namespaces(ctx, features)
    for selector in dict.fromkeys(unknown):
        why = next((w for prefix, w in absent.items() if selector.startswith(prefix)), None)
        if why:  # "": left out on purpose (every tool of it excluded), nothing to warn about
            offered.warnings.append(f"tool(s) {selector} not offered in this run: {why}")
    unknown = [s for s in unknown if not any(s.startswith(prefix) for prefix in absent)]
    if unknown:
        hints = [
            f"{s} (did you mean '{close[0]}'?)" if (close := difflib.get_close_matches(s, known, n=1)) else s
            for s in sorted(set(unknown))
        ]
        # a typo on the command line is bad usage (exit 2); one in config.yaml a config error (exit 5)
        error = UsageError if set(unknown) & set(flagged) else ConfigError
        raise error(f"unknown tool(s) {', '.join(hints)}; available: {', '.join(offered.names()) or '(none)'}")
    for name in enable or []:
        if not is_pattern(name) and name in offered.unavailable:
            offered.warnings.append(f"tool {name} is not offered in this run: {offered.unavailable[name]}")

    keep = [n for n in offered.names() if (enable is None or matches(n, enable)) and not matches(n, disable)]
    resolved = ResolvedTools(offered.get(n) for n in keep)  # type: ignore[misc]
    resolved.families = {n: offered.families[n] for n in keep}
    resolved.unavailable = offered.unavailable
    resolved.warnings = offered.warnings
    resolved.schema_tokens = schema_tokens(resolved)
    resolved.selectors = (enable, disable)
    for feature in features:
        feature.tools_resolved(ctx, resolved)
    return resolved


def _absent_namespaces(ctx: RunContext, features: Sequence[Feature]) -> dict[str, str]:
    """Asked after every family listed its tools (an MCP server's state is known only then)."""
    out: dict[str, str] = {}
    for feature in features:
        out.update(feature.absent_namespaces(ctx))
    return out


class ToolReportFeature(Feature):
    """The resolver's findings in the report: `tool_schema_tokens` (per model call) and its warnings."""

    name = "tool-report"

    def __init__(self) -> None:
        self.resolved: ResolvedTools | None = None  # a started run's tools, once resolved
        self._pending: list[str] = []

    def start(self, ctx: RunContext) -> ToolReportFeature:
        return ToolReportFeature()

    def tools_resolved(self, ctx: RunContext, resolved: ResolvedTools) -> None:
        """Called by the resolver; the last resolution is the run's."""
        self.resolved = resolved
        self._pending = list(resolved.warnings)

    def _drain(self) -> list[str]:
        out, self._pending = self._pending, []
        return out

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        return [WarningsHook(self._drain, "tools")]

    def after_run(self, ctx: RunContext, report: RunReport) -> ToolSection | None:
        if self.resolved is None:
            return None
        return ToolSection(
            tool_schema_tokens=self.resolved.schema_tokens, warnings=unsaid(report.warnings, self.resolved.warnings)
        )

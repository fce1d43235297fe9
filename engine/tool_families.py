"""The tool families beyond the built-ins, as Features the composition root lists (`cli/deps.py`):

- `McpFeature`: the configured MCP servers' tools (`<server>__<tool>`); connects at run start, closes
  at run end (and at interpreter exit, as a backstop for a run that never reached its end);
- `WebFeature`: `web_fetch`, and `web_search` when a search backend is configured;
- `DelegateFeature`: the sub-agent tool;
- `ToolReportFeature`: puts the resolver's figures (schema tokens per call, warnings) in the RunReport.

A Feature cannot yield events, so warnings (a server that failed to start or died, a requested tool
that is unavailable) go out through a small hook that turns them into `warning` events as soon as the
runner asks hooks for events (when the unit starts, after a model reply, after a tool call), and into
`report.warnings` at the end.
"""

from __future__ import annotations

import atexit
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from arreio.engine.feature import Feature, RunContext
from arreio.engine.hooks import RunHook

if TYPE_CHECKING:
    from arreio.engine.report import RunReport
    from arreio.engine.tools.base import Tool
    from arreio.engine.tools.mcp import McpHub
    from arreio.engine.tools.resolver import ResolvedTools

_OPEN_HUBS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_open_hubs() -> None:  # pragma: no cover — exercised by processes that exit mid-run
    for hub in list(_OPEN_HUBS):
        hub.close()


class WarningsHook(RunHook):
    """Turns warnings collected outside the event stream into `warning` events, once each."""

    name = "tool-family-warnings"

    def __init__(self, drain: Callable[[], list[str]], code: str) -> None:
        self.drain = drain
        self.code = code

    def _events(self) -> list[Any]:
        from arreio.engine.events import Warning_

        return [Warning_(message=m, code=self.code) for m in self.drain()]

    def at_unit_start(self, runner: Any) -> list[Any]:
        return self._events()

    def after_model(self, runner: Any, usage: Any) -> list[Any]:
        return self._events()

    def after_tool(self, runner: Any, call: Any, result: Any) -> list[Any]:
        return self._events()


class McpFeature(Feature):
    """MCP servers from `mcp_servers:`. One hub per run; tools() may be asked twice while a run is
    assembled (the new session's prompt, then the run), so the open hub is reused."""

    name = "mcp"

    def check(self, settings: Any) -> None:
        from arreio.engine.tools.mcp_config import parse_mcp_servers

        parse_mcp_servers(settings.mcp_servers)

    def __init__(self) -> None:
        self._hub: McpHub | None = None

    def tools(self, ctx: RunContext) -> list[Tool]:
        from arreio.engine.tools.mcp_config import parse_mcp_servers

        servers = parse_mcp_servers(ctx.settings.mcp_servers)
        if not any(s.enabled for s in servers.values()):
            return []
        if self._hub is None:
            from arreio.engine.tools.mcp import McpHub

            self._hub = McpHub(servers, cwd=ctx.cwd, env=ctx.env, log_dir=ctx.state_dir / "logs")
            _OPEN_HUBS.add(self._hub)
            self._hub.start()
        return list(self._hub.tools())

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        hub = self._hub
        return [WarningsHook(hub.drain_warnings, "mcp")] if hub is not None else []

    def after_run(self, ctx: RunContext, report: RunReport) -> None:
        if self._hub is None:
            return
        report.warnings.extend(self._hub.warnings)
        self.close()

    def close(self) -> None:
        """Shut the servers down now (run end, Ctrl-C: the pipeline's `finally` reaches after_run)."""
        hub, self._hub = self._hub, None
        if hub is not None:
            hub.close()


class WebFeature(Feature):
    """`web_fetch` (unless `web.fetch: false`) and `web_search` (offered only with a backend)."""

    name = "web"

    def check(self, settings: Any) -> None:
        from arreio.engine.tools.web_config import parse_web

        parse_web(settings.web)

    def tools(self, ctx: RunContext) -> list[Tool]:
        from arreio.engine.tools.web_config import parse_web
        from arreio.engine.tools.web_fetch import WebFetch
        from arreio.engine.tools.web_search import WebSearch, make_backend

        settings = parse_web(ctx.settings.web)
        out: list[Tool] = [WebFetch(settings)] if settings.fetch else []
        backend, why_not = make_backend(settings.search, ctx.env)
        default_k = settings.search.max_results if settings.search else 5
        out.append(WebSearch(backend, why_not=why_not, default_k=default_k))
        return out


class DelegateFeature(Feature):
    """The sub-agent tool. `provider_factory` serves a sub-agent that asks for another model (default:
    the provider registry); one on the parent's model shares the parent's provider."""

    name = "delegate"

    def check(self, settings: Any) -> None:
        from arreio.engine.tools.delegate import parse_delegate

        parse_delegate(settings.tools.model_dump())

    def __init__(self, provider_factory: Callable[..., Any] | None = None) -> None:
        self.provider_factory = provider_factory

    def tools(self, ctx: RunContext) -> list[Tool]:
        from arreio.engine.tools.delegate import Delegate, parse_delegate

        return [Delegate(parse_delegate(ctx.settings.tools.model_dump()), provider_factory=self.provider_factory)]


class ToolReportFeature(Feature):
    """The resolver's findings in the report: `tool_schema_tokens` (per model call) and its warnings."""

    name = "tool-report"

    def __init__(self) -> None:
        self.resolved: ResolvedTools | None = None
        self._pending: list[str] = []

    def tools_resolved(self, ctx: RunContext, resolved: ResolvedTools) -> None:
        """Called by the resolver; the last resolution is the run's."""
        self.resolved = resolved
        self._pending = list(resolved.warnings)

    def _drain(self) -> list[str]:
        out, self._pending = self._pending, []
        return out

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        return [WarningsHook(self._drain, "tools")]

    def after_run(self, ctx: RunContext, report: RunReport) -> None:
        if self.resolved is None:
            return
        report.tool_schema_tokens = self.resolved.schema_tokens
        report.warnings.extend(w for w in self.resolved.warnings if w not in report.warnings)

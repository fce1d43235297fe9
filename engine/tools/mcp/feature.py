"""`McpFeature`: the configured MCP servers' tools (`<server>__<tool>`) in every run. It connects at
run start and closes at run end (and at interpreter exit, as a backstop for a run that never reached
its end). A server that fails to start or dies is a warning event, not a failed run."""

from __future__ import annotations

import atexit
import weakref
from typing import TYPE_CHECKING

from arreio.engine.feature import Feature
from arreio.engine.hooks import RunHook, WarningsHook
from arreio.engine.run_context import RunContext
from arreio.engine.tools.mcp.config import mcp_servers

if TYPE_CHECKING:
    from arreio.engine.conveyor.report import RunReport
    from arreio.engine.tools.base import Tool
    from arreio.engine.tools.mcp.hub import McpHub

_OPEN_HUBS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_open_hubs() -> None:  # pragma: no cover — exercised by processes that exit mid-run
    for hub in list(_OPEN_HUBS):
        hub.close()


class McpFeature(Feature):
    """MCP servers from `mcp_servers:`. One hub per run; tools() may be asked twice while a run is
    assembled (the new session's prompt, then the run), so the open hub is reused."""

    name = "mcp"

    def check(self, ctx: RunContext) -> None:
        ctx.section(mcp_servers)

    def __init__(self) -> None:
        self._hub: McpHub | None = None

    def tools(self, ctx: RunContext) -> list[Tool]:
        servers = ctx.section(mcp_servers)
        if not any(s.enabled for s in servers.values()):
            return []
        if self._hub is None:
            from arreio.engine.tools.mcp.hub import McpHub

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

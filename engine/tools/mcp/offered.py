"""What one MCP server offers the model: its listed tools as `McpTool`s named `<server>__<tool>`,
then its resource tools when it has resources. A tool its server's `tools:` allow/deny keeps back is
known but not offered (its prerequisite says why); descriptions and schemas are read through the
hub's screen before the model sees them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arreio.engine.tools.mcp.connection import Connection
from arreio.engine.tools.mcp.resources import resource_tools
from arreio.engine.tools.mcp.tool import McpTool, tool_name

if TYPE_CHECKING:
    from arreio.engine.tools.mcp.hub import McpHub


def server_tools(hub: McpHub, conn: Connection) -> list[McpTool]:
    """The tools `conn` offers, in listing order; its status records which are offered and which withheld."""
    taken: set[str] = set()
    out: list[McpTool] = []
    for remote in conn.listing:
        name = tool_name(conn.name, remote.name, taken)
        taken.add(name)
        hint = getattr(remote.annotations, "read_only_hint", None) if remote.annotations else None
        sensitive = conn.config.sensitive if conn.config.sensitive is not None else hint is not True
        why = conn.config.tools.withheld(remote.name)
        description, schema = hub.screen.tool(conn.name, remote.name, remote.description or "", remote.input_schema)
        out.append(
            McpTool(
                hub,
                conn.name,
                remote.name,
                name,
                description,
                schema,
                sensitive=sensitive,
                timeout_s=conn.config.timeout_s,
                read_only=hint is True,
                withheld=f"{why} (mcp_servers.{conn.name}.tools)" if why else None,
            )
        )
    if conn.resources:
        out += resource_tools(hub, conn, taken)
    conn.status.tools = sorted(t.name for t in out if t.withheld is None)
    conn.status.withheld = sorted(t.name for t in out if t.withheld is not None)
    return out

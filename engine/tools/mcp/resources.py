"""A server's resources as two tools: `<server>__list_resources` and `<server>__read_resource`,
offered only when the server listed at least one resource or resource template at start.

They are `McpTool`s (so they go through the protection chain, every hook, and a large result becomes
a result set like any other tool's) that send `resources/list` and `resources/read` instead of
`tools/call`. Reading changes nothing: both are read-only (`repeat = "reads"`) and not sensitive
unless the server's `sensitive:` setting says so. The server's `tools: {allow, deny}` names them
by their short names (`list_resources`, `read_resource`), like its own tools.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, ClassVar

from arreio.engine.core.messages import ImagePart
from arreio.engine.tools.base import ToolError, ToolResult
from arreio.engine.tools.mcp.tool import McpTool, resource_text, tool_name
from arreio.engine.tools.run_context import RunContext

if TYPE_CHECKING:
    from arreio.engine.tools.mcp.connection import Connection
    from arreio.engine.tools.mcp.hub import McpHub

RESOURCE_TOOLS = ("list_resources", "read_resource")
_NAMED = 5  # resources named in the list tool's description, so a model may skip the listing


def _uri(item: Any) -> str:
    return str(getattr(item, "uri", None) or getattr(item, "uri_template", ""))


def _line(item: Any) -> str:
    template = getattr(item, "uri_template", None)
    head = f"{_uri(item)} — {item.name}" if getattr(item, "name", None) else _uri(item)
    mime = getattr(item, "mime_type", None)
    text = head + (f" ({mime})" if mime else "")
    if getattr(item, "description", None):
        text += f": {' '.join(item.description.split())}"
    return text + (" [template: fill in the {placeholders}]" if template else "")


def resource_tools(hub: McpHub, conn: Connection, taken: set[str]) -> list[McpTool]:
    """The two resource tools of `conn` (names made unique against its own tools in `taken`)."""
    out: list[McpTool] = []
    sensitive = bool(conn.config.sensitive)
    for short, cls in zip(RESOURCE_TOOLS, (ListResourcesTool, ReadResourceTool)):
        name = tool_name(conn.name, short, taken)
        taken.add(name)
        why = conn.config.tools.withheld(short)
        out.append(
            cls(
                hub, conn, name, sensitive=sensitive, withheld=f"{why} (mcp_servers.{conn.name}.tools)" if why else None
            )
        )
    return out


class _ResourceTool(McpTool):
    short: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    schema: ClassVar[dict[str, Any]] = {}

    def __init__(self, hub: McpHub, conn: Connection, name: str, *, sensitive: bool, withheld: str | None) -> None:
        known = conn.resources
        named = ", ".join(_uri(r) for r in known[:_NAMED]) + (", …" if len(known) > _NAMED else "")
        description = f"{self.summary} It has {len(known)} (e.g. {named})."
        super().__init__(
            hub,
            conn.name,
            self.short,
            name,
            description,
            self.schema,
            sensitive=sensitive,
            timeout_s=conn.config.timeout_s,
            read_only=True,
            withheld=withheld,
        )
        self.conn = conn


class ListResourcesTool(_ResourceTool):
    short = "list_resources"
    summary = "List the resources (documents, data) this MCP server offers: uri, name, type, description."
    schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def execute(self, args: Any, ctx: RunContext) -> ToolResult:
        from arreio.engine.tools.mcp.connection import list_all

        async def send(client: Any) -> list[Any]:
            found = await list_all(lambda c: client.list_resources(cursor=c, cache_mode="refresh"), "resources")
            found += await list_all(
                lambda c: client.list_resource_templates(cursor=c, cache_mode="refresh"), "resource_templates"
            )
            return found

        found = await self.hub.request(self.server, send, self.call_timeout_s)
        if not found:
            return ToolResult(f"MCP server '{self.server}' lists no resources now")
        lines = [_line(item) for item in found]
        return ToolResult(
            f"{len(found)} resource(s) of MCP server '{self.server}' (read one with "
            f"{self.name.replace('list_resources', 'read_resource')}):\n" + "\n".join(lines)
        )


class ReadResourceTool(_ResourceTool):
    short = "read_resource"
    summary = "Read one resource of this MCP server by its uri (from its list_resources)."
    schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"uri": {"type": "string", "description": "The resource's uri."}},
        "required": ["uri"],
    }

    async def execute(self, args: Any, ctx: RunContext) -> ToolResult:
        uri = str(args.model_dump().get("uri") if hasattr(args, "model_dump") else args["uri"])
        try:
            result = await self.hub.request(self.server, lambda client: client.read_resource(uri), self.call_timeout_s)
        except ToolError as error:
            close = difflib.get_close_matches(uri, [_uri(r) for r in self.conn.resources], n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close and uri not in close else ""
            raise ToolError(error.message + hint, transient=error.transient) from None
        return contents_result(result.contents or [])


def contents_result(contents: list[Any]) -> ToolResult:
    """`resources/read` contents → one `ToolResult`. One text content is returned as it is (so a
    large CSV or JSON becomes a queryable result set); several are each headed by their uri; an
    image blob travels as an image; another blob is described, not inlined."""
    if not contents:
        return ToolResult("(the resource is empty)")
    if len(contents) == 1 and hasattr(contents[0], "text"):
        return ToolResult(contents[0].text or "(the resource is empty)")
    images: list[ImagePart] = []
    texts = [resource_text(item, images) for item in contents]
    return ToolResult("\n".join(texts), images=images)

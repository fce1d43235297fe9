"""One MCP server's connection as the hub keeps it: its state, what it listed (tools, resources,
instructions), how it is reached (stdio or streamable HTTP), and how it hears that its tool list
changed. The hub (`hub.py`) owns the lifecycle; this module owns the per-server pieces.

A server says its tools changed with `notifications/tools/list_changed`. On a handshake-era
connection that notification simply arrives; on a 2026-era one it arrives only on a
`subscriptions/listen` stream the client opened, so `listen_for_changes` opens one when the server
advertises `tools.listChanged`. Either way the message handler marks the connection `changed`, and
the run's hook re-lists that server's tools before the next model call.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arreio.engine.tools.mcp import logs
from arreio.engine.tools.mcp.config import HttpServer, McpServerConfig, StdioServer, expand_vars
from arreio.engine.tools.mcp.launch import SandboxWrap, launch

RESTARTS_PER_RUN = 1


@dataclass(frozen=True)
class StartPlace:
    """Where a run's stdio servers start and what they may not be found in (`launch.py`): `home` is
    arreio's own folder for them (None: the hub makes a fresh temporary one), `untrusted` the places
    the agent can write, `wrap` the run's sandbox."""

    untrusted: tuple[Path, ...]
    wrap: SandboxWrap | None = None
    home: Path | None = None


# a stdio server that dies is started again this many times, then withdrawn


@dataclass
class ServerState:
    """What `arreio mcp list` and the report say about one server."""

    name: str
    transport: str
    state: str = "pending"  # pending | ready | restarting | failed | dead | disabled | closed
    detail: str = ""
    tools: list[str] = field(default_factory=list)  # offered names, `<server>__<tool>`
    withheld: list[str] = field(default_factory=list)  # listed, but kept back by its `tools:` allow/deny


class Connection:
    def __init__(self, name: str, config: McpServerConfig) -> None:
        self.name = name
        self.config = config
        self.client: Any = None
        self.listing: list[Any] = []  # the server's tools, as last listed
        self.resources: list[Any] = []  # resources and resource templates, as listed at start
        self.instructions: str = ""  # from initialize / discover
        self.changed = False  # the server said its tool list changed (or it was restarted): re-list
        self.generation = 0  # bumped by a restart: a late death report of the old process is ignored
        self.restarts = 0
        self.restart: asyncio.Future | None = None  # the restart under way, awaited by calls
        self.stop: asyncio.Event | None = None
        self.task: asyncio.Task | None = None
        self.log: logs.ServerLog | None = None
        self.log_mark = 0  # log size when the current call began: a crash quotes only what came after
        self.auth_status: int | None = None  # the last HTTP 401/403 the server answered (the SDK hides it)
        self.told = False  # a call's result already told the model this server is gone
        self.status = ServerState(name, config.transport, "disabled" if not config.enabled else "pending")

    def may_restart(self) -> bool:
        return isinstance(self.config, StdioServer) and self.restarts < RESTARTS_PER_RUN

    async def on_message(self, message: Any) -> None:
        """The SDK's message handler: a changed tool list marks the connection for re-listing."""
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/tools/list_changed":
            self.changed = True


async def transport(
    conn: Connection,
    stack: contextlib.AsyncExitStack,
    *,
    cwd: Path,
    env: Mapping[str, str],
    start: StartPlace | None = None,
) -> Any:
    """The SDK transport for `conn` (stdio: started as `launch.py` says, its stderr into the server's
    log; http: its headers, with a hook that keeps the last 401/403, which the SDK would otherwise hide)."""
    cfg = conn.config
    where = f"mcp_servers.{conn.name}"
    if isinstance(cfg, StdioServer):
        from mcp.client.stdio import StdioServerParameters, stdio_client

        start = start or StartPlace(untrusted=(cwd.resolve(),))
        assert start.home is not None, "the hub gives its servers a home"
        how = launch(cfg, name=conn.name, cwd=cwd, env=env, home=start.home, untrusted=start.untrusted, wrap=start.wrap)
        params = StdioServerParameters(command=how.command, args=how.args, env=how.env, cwd=how.cwd)
        assert conn.log is not None
        return stdio_client(params, errlog=conn.log.errlog())
    assert isinstance(cfg, HttpServer)
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    try:
        headers = expand_vars(cfg.headers, env, where + ".headers")
    except KeyError as exc:
        raise RuntimeError(exc.args[0]) from None
    http = await stack.enter_async_context(create_mcp_http_client(headers=headers))

    async def note_auth(response: Any) -> None:
        # The SDK turns every HTTP error into "Server returned an error response"; keep the one
        # status that has a remedy the user controls (the configured headers).
        if response.status_code in (401, 403):
            conn.auth_status = response.status_code

    http.event_hooks = {**http.event_hooks, "response": [*http.event_hooks.get("response", []), note_auth]}
    return streamable_http_client(cfg.url, http_client=http)


async def list_all(fetch: Any, key: str) -> list[Any]:
    """Every page of one list verb (`fetch(cursor)`); a paginator that never ends cannot hang."""
    items, cursor = [], None
    for _ in range(100):
        page = await fetch(cursor)
        items += getattr(page, key)
        cursor = page.next_cursor
        if not cursor:
            break
    return items


async def list_tools(client: Any) -> list[Any]:
    return await list_all(lambda c: client.list_tools(cursor=c, cache_mode="refresh"), "tools")


async def list_resources(client: Any) -> list[Any]:
    """Resources and resource templates, when the server advertises resources; [] otherwise or when
    listing fails (a server's broken resources must not cost it its tools)."""
    caps = getattr(client, "server_capabilities", None)
    if caps is None or getattr(caps, "resources", None) is None:
        return []
    out: list[Any] = []
    with contextlib.suppress(Exception):
        out += await list_all(lambda c: client.list_resources(cursor=c, cache_mode="refresh"), "resources")
    with contextlib.suppress(Exception):
        out += await list_all(
            lambda c: client.list_resource_templates(cursor=c, cache_mode="refresh"), "resource_templates"
        )
    return out


async def listen_for_changes(client: Any) -> None:
    """Keep a `subscriptions/listen` stream open for tool-list changes on a 2026-era connection whose
    server advertises them (events reach `Connection.on_message` through the SDK). Returns at once on
    a handshake-era connection (its notifications need no stream) and quietly when the stream ends."""
    caps = getattr(client, "server_capabilities", None)
    tools = getattr(caps, "tools", None) if caps is not None else None
    if not getattr(tools, "list_changed", False):
        return
    from mcp.client.subscriptions import ListenNotSupportedError

    with contextlib.suppress(ListenNotSupportedError, Exception):
        async with client.listen(tools_list_changed=True) as subscription:
            async for _ in subscription:
                pass  # the SDK hands each event to the message handler too


def exited(client: Any) -> bool:
    """Whether the connection's transport has already reached its end (the server exited, idle).
    The SDK tells nobody until the next request fails; its dispatcher's `_closed` flag says so at
    once, with no I/O. Not public API: when it is missing, the death is found by the next call."""
    session = getattr(client, "_session", None)
    return bool(getattr(getattr(session, "_dispatcher", None), "_closed", False))


def gone_text(conn: Connection, *, hub_closed: bool, during_call: bool = False) -> str:
    """What the model reads when a call finds the server gone: the first time in full (its tools
    are withdrawn from later requests, so this is the one place the model learns why), then short."""
    if hub_closed and conn.status.state in ("ready", "closed"):
        return f"MCP server '{conn.name}' is not running (the run's servers were shut down)"
    if conn.status.state == "restarting":
        return (
            f"MCP server '{conn.name}' stopped during the call and is being restarted (once per run); "
            "its tools stay available — if this call is what stopped it, do not repeat it"
        )
    if conn.told:
        return f"MCP server '{conn.name}' is not running; its tools are unavailable (withdrawn earlier in this run)"
    conn.told = True
    why = conn.status.detail or conn.status.state
    what = "stopped during the call" if during_call else f"is not running ({why})"
    names = ", ".join(conn.status.tools[:6]) + (", …" if len(conn.status.tools) > 6 else "")
    return (
        f"MCP server '{conn.name}' {what}; its tools ({names or 'none'}) are withdrawn for the rest of "
        "this run — do not call them again; use another way"
    )


def describe_error(exc: BaseException) -> str:
    """One line for an exception, digging into exception groups (anyio wraps failures in them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


def auth_failed(conn: Connection) -> str:
    return (
        f"authentication failed ({conn.auth_status}) for server {conn.name} — check its headers "
        f"(mcp_servers.{conn.name}.headers)"
    )


def shown(path: Path | None, cwd: Path) -> str:
    """A log path as the user would type it: relative to the working directory when it is inside."""
    if path is None:
        return "its log"
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def failure_detail(conn: Connection, why: str, cwd: Path) -> str:
    """Why a server did not start, for its state and the warning: its auth refusal, or `why` with what
    it printed that was not MCP and the end of its stderr."""
    if conn.auth_status is not None:
        return auth_failed(conn)
    tail = conn.log.tail(since=conn.log_mark) if conn.log else ""
    if conn.log and conn.log.junk:
        why += f"; it printed {conn.log.junk} line(s) on stdout that are not MCP (see {shown(conn.log.path, cwd)})"
    return why + (f"; its stderr ends: {tail}" if tail else "")

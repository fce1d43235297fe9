"""MCP servers as a tool family (official `mcp` package, 2.x).

`McpHub` holds one run's connections. They live on a private event loop in a daemon thread: the
tool set must be known when the run is assembled (`Feature.tools` is synchronous), and the SDK's
anyio task groups must be entered and left by the same task, which a per-server task on that loop
guarantees. Calls hop over with `run_coroutine_threadsafe`, so a Ctrl-C that cancels the caller
cancels the request on the server's loop too.

Each server's tools are offered as `<server>__<tool>` `McpTool`s — ordinary `Tool`s, so every call
goes through the protection chain and every hook. A server's `tools: {allow, deny}` withholds some
(known, not offered). Failures are warnings, never a failed run:

- a server that fails to start (or misses `connect_timeout_s`) offers no tools; an HTTP 401/403 says
  "authentication failed (401) … check its headers";
- one that dies mid-run: the call that found it says so in its result, one warning is raised, and its
  tools are withdrawn from later requests (`withdrawn()`, applied by the feature's hook);
- what the server prints on stderr and what the SDK logs about it go to its log file (`logs.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arreio.engine.tools.base import ToolError, ToolResult
from arreio.engine.tools.mcp import logs
from arreio.engine.tools.mcp.config import HttpServer, McpServerConfig, StdioServer, expand_vars, filter_warnings
from arreio.engine.tools.mcp.tool import McpTool, normalise_result, tool_name

__all__ = ["McpHub", "ServerState", "tool_name"]

_CLOSE_TIMEOUT_S = 10.0
_SAFE_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")


@dataclass
class ServerState:
    """What `arreio mcp list` and the report say about one server."""

    name: str
    transport: str
    state: str = "pending"  # pending | ready | failed | dead | disabled | closed
    detail: str = ""
    tools: list[str] = field(default_factory=list)  # offered names, `<server>__<tool>`
    withheld: list[str] = field(default_factory=list)  # listed, but kept back by its `tools:` allow/deny


class _Connection:
    def __init__(self, name: str, config: McpServerConfig) -> None:
        self.name = name
        self.config = config
        self.client: Any = None
        self.listing: list[Any] = []
        self.stop: asyncio.Event | None = None
        self.task: asyncio.Task | None = None
        self.log: logs.ServerLog | None = None
        self.log_mark = 0  # log size when the current call began: a crash quotes only what came after
        self.auth_status: int | None = None  # the last HTTP 401/403 the server answered (the SDK hides it)
        self.told = False  # a call's result already told the model this server is gone
        self.status = ServerState(name, config.transport, "disabled" if not config.enabled else "pending")


class McpHub:
    """The MCP connections of one run. `start()` connects every enabled server in parallel and lists
    its tools; `tools()` offers them; `close()` shuts everything down (idempotent, also at exit)."""

    def __init__(
        self, servers: Mapping[str, McpServerConfig], *, cwd: Path, env: Mapping[str, str], log_dir: Path | None = None
    ) -> None:
        self.cwd = cwd
        self.env = dict(env)
        self.log_dir = log_dir
        self._conns = {name: _Connection(name, cfg) for name, cfg in servers.items()}
        logs.route_sdk_logging()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="arreio-mcp", daemon=True)
        self._thread.start()
        self._closed = False
        self._lock = threading.Lock()
        self._pending: list[str] = []  # warnings not yet shown (drained by the run's hook)
        self.warnings: list[str] = []  # every warning of the run, for the report

    # -- state ------------------------------------------------------------------------------------
    def states(self) -> list[ServerState]:
        return [c.status for c in self._conns.values()]

    def warn(self, message: str) -> None:
        with self._lock:
            self._pending.append(message)
            self.warnings.append(message)

    def drain_warnings(self) -> list[str]:
        with self._lock:
            out, self._pending = self._pending, []
        return out

    def withdrawn(self) -> set[str]:
        """Names of offered tools whose server has stopped: later requests must not offer them."""
        return {n for c in self._conns.values() if c.status.state in ("dead", "closed") for n in c.status.tools}

    # -- start --------------------------------------------------------------------------------------
    def start(self) -> None:
        """Connect and list, blocking the caller (run assembly) until every server answered or failed."""
        live = [c for c in self._conns.values() if c.config.enabled]
        if not live:
            return
        future = asyncio.run_coroutine_threadsafe(self._start_all(live), self._loop)
        future.result(timeout=max(c.config.connect_timeout_s for c in live) + 15)

    async def _start_all(self, conns: list[_Connection]) -> None:
        await asyncio.gather(*(self._start_one(c) for c in conns))

    async def _start_one(self, conn: _Connection) -> None:
        ready: asyncio.Future = self._loop.create_future()
        conn.stop = asyncio.Event()
        conn.task = self._loop.create_task(self._serve(conn, ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), conn.config.connect_timeout_s)
        except TimeoutError:
            conn.task.cancel()
            with contextlib.suppress(BaseException):
                await conn.task
            self._fail(conn, f"did not answer within {conn.config.connect_timeout_s:g}s")
        except Exception as exc:  # noqa: BLE001 — any start-up failure is a warning, never a crash
            self._fail(conn, _describe(exc))
        else:
            conn.status.state = "ready"
            for message in filter_warnings(conn.name, conn.config, [t.name for t in conn.listing]):
                self.warn(message)

    def _fail(self, conn: _Connection, why: str) -> None:
        if conn.auth_status is not None:
            conn.status.state, conn.status.detail = "failed", _auth_failed(conn)
            self.warn(f"{conn.status.detail}; its tools are not available")
            return
        tail = conn.log.tail() if conn.log else ""
        if conn.log and conn.log.junk:
            where = _shown(conn.log.path, self.cwd)
            why += f"; it printed {conn.log.junk} line(s) on stdout that are not MCP (see {where})"
        conn.status.state, conn.status.detail = "failed", why + (f"; its stderr ends: {tail}" if tail else "")
        self.warn(f"MCP server '{conn.name}' failed to start: {conn.status.detail} — its tools are not available")

    async def _serve(self, conn: _Connection, ready: asyncio.Future) -> None:
        """The connection's whole life, in one task: enter, list, wait for stop, leave."""
        from mcp import Client
        from mcp_types import Implementation

        conn.log = logs.ServerLog(self.log_dir / f"mcp-{conn.name}.log" if self.log_dir else None)
        logs.bind(conn.log)  # this task's context: every task the SDK starts for the connection inherits it
        try:
            async with contextlib.AsyncExitStack() as stack:
                transport = await self._transport(conn, stack)
                client = Client(transport, client_info=Implementation(name="arreio", version="0.1"))
                await stack.enter_async_context(client)
                conn.listing = await _list_all(client)
                conn.client = client
                ready.set_result(True)
                await conn.stop.wait()  # type: ignore[union-attr]
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, Exception):
                    ready.set_exception(exc)
                else:  # cancelled (a missed connect_timeout_s): nobody awaits `ready` any more, and an
                    ready.cancel()  # exception set on it would be "Future exception was never retrieved"
            elif conn.status.state == "ready":
                self._died(conn, _describe(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if conn.log is not None:
                conn.log.close()

    async def _transport(self, conn: _Connection, stack: contextlib.AsyncExitStack) -> Any:
        cfg = conn.config
        where = f"mcp_servers.{conn.name}"
        if isinstance(cfg, StdioServer):
            from mcp.client.stdio import StdioServerParameters, stdio_client

            try:
                extra = expand_vars(cfg.env, self.env, where + ".env")
            except KeyError as exc:
                raise RuntimeError(exc.args[0]) from None
            env = {k: self.env[k] for k in _SAFE_ENV if k in self.env} | extra
            cwd = Path(cfg.cwd) if cfg.cwd else self.cwd
            params = StdioServerParameters(command=cfg.command, args=cfg.args, env=env, cwd=str(self.cwd / cwd))
            assert conn.log is not None
            return stdio_client(params, errlog=conn.log.stream)  # the server's stderr: its log file
        assert isinstance(cfg, HttpServer)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        try:
            headers = expand_vars(cfg.headers, self.env, where + ".headers")
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

    # -- tools --------------------------------------------------------------------------------------
    def tools(self) -> list[McpTool]:
        """One `McpTool` per listed tool of every ready server, named `<server>__<tool>`; a tool its
        server's `tools:` allow/deny keeps back says so as its prerequisite (known, not offered)."""
        out: list[McpTool] = []
        for conn in self._conns.values():
            if conn.status.state != "ready":
                continue
            taken: set[str] = set()
            offered, withheld = [], []
            for remote in conn.listing:
                name = tool_name(conn.name, remote.name, taken)
                taken.add(name)
                hint = getattr(remote.annotations, "read_only_hint", None) if remote.annotations else None
                sensitive = conn.config.sensitive if conn.config.sensitive is not None else hint is not True
                why = conn.config.tools.withheld(remote.name)
                (withheld if why else offered).append(name)
                out.append(McpTool(self, conn.name, remote.name, name, remote.description or "", remote.input_schema,
                                   sensitive=sensitive, timeout_s=conn.config.timeout_s, read_only=hint is True,
                                   withheld=f"{why} (mcp_servers.{conn.name}.tools)" if why else None))
            conn.status.tools, conn.status.withheld = sorted(offered), sorted(withheld)
        return out

    # -- calls --------------------------------------------------------------------------------------
    async def call(self, server: str, remote: str, arguments: dict[str, Any], timeout_s: float) -> ToolResult:
        """Call a tool from any event loop; failures are `ToolError`s the chain turns into data."""
        conn = self._conns[server]
        if conn.status.state != "ready" or self._closed:
            raise ToolError(self._gone(conn))
        future = asyncio.run_coroutine_threadsafe(self._call(conn, remote, arguments, timeout_s), self._loop)
        return await asyncio.wrap_future(future)

    async def _call(self, conn: _Connection, remote: str, arguments: dict[str, Any], timeout_s: float) -> ToolResult:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        if conn.log is not None:
            logs.bind(conn.log)  # this call's task: what the SDK logs about it goes to the server's log
            conn.log_mark = conn.log.size()
        conn.auth_status = None
        try:
            result = await conn.client.call_tool(remote, arguments, read_timeout_seconds=timeout_s)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise ToolError(f"timed out after {timeout_s:g}s waiting for MCP server '{conn.name}'",
                                transient=True) from None
            if exc.code == CONNECTION_CLOSED:
                self._died(conn, "its connection closed")
                raise ToolError(self._gone(conn, during_call=True)) from None
            if conn.auth_status is not None:
                raise ToolError(_auth_failed(conn)) from None
            raise ToolError(f"MCP server '{conn.name}' refused the call: {exc}") from None
        return normalise_result(result)

    def _gone(self, conn: _Connection, *, during_call: bool = False) -> str:
        """What the model reads when a call finds the server gone: the first time in full (its tools
        are withdrawn from later requests, so this is the one place the model learns why), then short."""
        if self._closed and conn.status.state in ("ready", "closed"):
            return f"MCP server '{conn.name}' is not running (the run's servers were shut down)"
        if conn.told:
            return f"MCP server '{conn.name}' is not running; its tools are unavailable (withdrawn earlier in this run)"
        conn.told = True
        why = conn.status.detail or conn.status.state
        what = "stopped during the call" if during_call else f"is not running ({why})"
        names = ", ".join(conn.status.tools[:6]) + (", …" if len(conn.status.tools) > 6 else "")
        return (f"MCP server '{conn.name}' {what}; its tools ({names or 'none'}) are withdrawn for the rest of "
                "this run — do not call them again; use another way")

    def _died(self, conn: _Connection, why: str) -> None:
        if conn.status.state != "ready":
            return
        tail = conn.log.tail(since=conn.log_mark) if conn.log else ""
        said = f"; its stderr ends: {tail}" if tail else "; it wrote nothing to stderr during the call"
        conn.status.state, conn.status.detail = "dead", why + said
        self.warn(f"MCP server '{conn.name}' stopped mid-run ({conn.status.detail}); its tools are withdrawn "
                  "for the rest of the run")

    # -- shutdown -----------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop every server (stdin closed, then terminate after a grace period) and the loop thread."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._close_all(), self._loop).result(timeout=_CLOSE_TIMEOUT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=2)
        if not self._thread.is_alive():
            self._loop.close()

    async def _close_all(self) -> None:
        tasks = []
        for conn in self._conns.values():
            if conn.stop is not None:
                conn.stop.set()
            if conn.task is not None:
                tasks.append(conn.task)
            if conn.status.state == "ready":
                conn.status.state = "closed"
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=_CLOSE_TIMEOUT_S - 1)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1)


async def _list_all(client: Any) -> list[Any]:
    tools, cursor = [], None
    for _ in range(100):  # a paginator that never ends cannot hang the start
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _describe(exc: BaseException) -> str:
    """One line for an exception, digging into exception groups (anyio wraps failures in them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


def _auth_failed(conn: _Connection) -> str:
    return (f"authentication failed ({conn.auth_status}) for server {conn.name} — check its headers "
            f"(mcp_servers.{conn.name}.headers)")


def _shown(path: Path | None, cwd: Path) -> str:
    """A log path as the user would type it: relative to the working directory when it is inside."""
    if path is None:
        return "its log"
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)

"""MCP servers as a tool family (official `mcp` package, 2.x).

`McpHub` holds one run's connections. They live on a private event loop in a daemon thread: the
tool set must be known when the run is assembled (`Feature.tools` is synchronous), and the SDK's
anyio task groups must be entered and left by the same task, which a per-server task on that loop
guarantees. Calls hop over with `run_coroutine_threadsafe`, so a Ctrl-C that cancels the caller
cancels the request on the server's loop too.

Each server's tools are offered as `<server>__<tool>` `McpTool`s — ordinary `Tool`s, so every call
goes through the protection chain and every hook. A server that fails to start is a warning and no
tools; one that dies mid-run turns its tools into a clear error result and a warning; the run goes on.
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
from arreio.engine.tools.mcp.config import HttpServer, McpServerConfig, StdioServer, expand_vars
from arreio.engine.tools.mcp.tool import McpTool, normalise_result, tool_name

_LOG_TAIL_CHARS = 400
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


class _Connection:
    def __init__(self, name: str, config: McpServerConfig) -> None:
        self.name = name
        self.config = config
        self.client: Any = None
        self.listing: list[Any] = []
        self.stop: asyncio.Event | None = None
        self.task: asyncio.Task | None = None
        self.log_path: Path | None = None
        self.log_mark = 0  # log size when the current call began: a crash quotes only what came after
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

    def _fail(self, conn: _Connection, why: str) -> None:
        tail = _log_tail(conn.log_path)
        conn.status.state, conn.status.detail = "failed", why + (f"; its stderr ends: {tail}" if tail else "")
        self.warn(f"MCP server '{conn.name}' failed to start: {conn.status.detail} — its tools are not available")

    async def _serve(self, conn: _Connection, ready: asyncio.Future) -> None:
        """The connection's whole life, in one task: enter, list, wait for stop, leave."""
        from mcp import Client
        from mcp_types import Implementation

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
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(_describe(exc)))
            elif conn.status.state == "ready":
                self._died(conn, _describe(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise

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
            errlog = stack.enter_context(self._errlog(conn))
            return stdio_client(params, errlog=errlog)
        assert isinstance(cfg, HttpServer)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        try:
            headers = expand_vars(cfg.headers, self.env, where + ".headers")
        except KeyError as exc:
            raise RuntimeError(exc.args[0]) from None
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        return streamable_http_client(cfg.url, http_client=http)

    def _errlog(self, conn: _Connection) -> Any:
        """The server's stderr goes to a log file (not the user's terminal); its tail explains a failure."""
        if self.log_dir is None:
            import tempfile

            return tempfile.TemporaryFile("w+", encoding="utf-8")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        conn.log_path = self.log_dir / f"mcp-{conn.name}.log"
        return open(conn.log_path, "w", encoding="utf-8")

    # -- tools --------------------------------------------------------------------------------------
    def tools(self) -> list[McpTool]:
        """One `McpTool` per listed tool of every ready server, named `<server>__<tool>`."""
        out: list[McpTool] = []
        for conn in self._conns.values():
            if conn.status.state != "ready":
                continue
            taken: set[str] = set()
            for remote in conn.listing:
                name = tool_name(conn.name, remote.name, taken)
                taken.add(name)
                hint = getattr(remote.annotations, "read_only_hint", None) if remote.annotations else None
                sensitive = conn.config.sensitive if conn.config.sensitive is not None else hint is not True
                out.append(McpTool(self, conn.name, remote.name, name, remote.description or "", remote.input_schema,
                                   sensitive=sensitive, timeout_s=conn.config.timeout_s, read_only=hint is True))
            conn.status.tools = sorted(taken)
        return out

    # -- calls --------------------------------------------------------------------------------------
    async def call(self, server: str, remote: str, arguments: dict[str, Any], timeout_s: float) -> ToolResult:
        """Call a tool from any event loop; failures are `ToolError`s the chain turns into data."""
        conn = self._conns[server]
        if conn.status.state != "ready" or self._closed:
            raise ToolError(f"MCP server '{server}' is not running ({conn.status.detail or conn.status.state}); "
                            "its tools are unavailable for the rest of this run — use another way")
        future = asyncio.run_coroutine_threadsafe(self._call(conn, remote, arguments, timeout_s), self._loop)
        return await asyncio.wrap_future(future)

    async def _call(self, conn: _Connection, remote: str, arguments: dict[str, Any], timeout_s: float) -> ToolResult:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        conn.log_mark = _log_size(conn.log_path)
        try:
            result = await conn.client.call_tool(remote, arguments, read_timeout_seconds=timeout_s)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise ToolError(f"timed out after {timeout_s:g}s waiting for MCP server '{conn.name}'",
                                transient=True) from None
            if exc.code == CONNECTION_CLOSED:
                self._died(conn, "its connection closed")
                raise ToolError(f"MCP server '{conn.name}' stopped during the call; its tools are unavailable "
                                "for the rest of this run") from None
            raise ToolError(f"MCP server '{conn.name}' refused the call: {exc}") from None
        return normalise_result(result)

    def _died(self, conn: _Connection, why: str) -> None:
        if conn.status.state != "ready":
            return
        tail = _log_tail(conn.log_path, since=conn.log_mark)
        said = f"; its stderr ends: {tail}" if tail else "; it wrote nothing to stderr during the call"
        conn.status.state, conn.status.detail = "dead", why + said
        self.warn(f"MCP server '{conn.name}' stopped mid-run ({conn.status.detail}); its tools are unavailable")

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


def _log_size(path: Path | None) -> int:
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


def _log_tail(path: Path | None, since: int = 0) -> str:
    """The last lines of a server's stderr log, from byte `since` on (older lines may be unrelated)."""
    if path is None or not path.exists():
        return ""
    try:
        with open(path, "rb") as handle:
            handle.seek(since)
            text = handle.read().decode("utf-8", errors="replace").strip()
    except OSError:
        return ""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    tail = " | ".join(lines[-3:])
    return tail[-_LOG_TAIL_CHARS:]

"""MCP servers as a tool family (official `mcp` package, 2.x).

`McpHub` holds one run's connections. They live on a private event loop in a daemon thread: the
tool set must be known when the run is assembled (`Feature.tools` is synchronous), and the SDK's
anyio task groups must be entered and left by the same task, which a per-server task on that loop
guarantees. Calls hop over with `run_coroutine_threadsafe`, so a Ctrl-C that cancels the caller
cancels the request on the server's loop too.

Each server's tools are offered as `<server>__<tool>` `McpTool`s — ordinary `Tool`s, so every call
goes through the protection chain and every hook. A server with resources also gets
`<server>__list_resources` and `<server>__read_resource` (`resources.py`). A server's
`tools: {allow, deny}` withholds some (known, not offered). Failures are warnings, never a failed run:

- a server that fails to start (or misses `connect_timeout_s`) offers no tools; an HTTP 401/403 says
  "authentication failed (401) … check its headers";
- a stdio server that dies mid-run is started again, once per run (`RESTARTS_PER_RUN`): the call
  that found it dead says so, a warning says it is restarting, and its tools stay; if it dies again
  (or cannot start again), one more warning, and its tools are withdrawn from later requests
  (`withdrawn()`, applied by the feature's hook);
- a server that says its tool list changed is re-listed before the next model call (`refresh()`);
- what the server prints on stderr and what the SDK logs about it go to its log file (`logs.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from arreio.engine.tools.base import ToolError, ToolResult
from arreio.engine.tools.mcp import connection, logs
from arreio.engine.tools.mcp.config import McpServerConfig, filter_warnings
from arreio.engine.tools.mcp.connection import Connection, ServerState, StartPlace
from arreio.engine.tools.mcp.offered import server_tools
from arreio.engine.tools.mcp.resources import RESOURCE_TOOLS
from arreio.engine.tools.mcp.screen import PromptScreen, Screen
from arreio.engine.tools.mcp.tool import McpTool, normalise_result, tool_name
from arreio.engine.walls.redact import Redactor

__all__ = ["McpHub", "ServerState", "tool_name"]

_CLOSE_TIMEOUT_S = 10.0


class McpHub:
    """The MCP connections of one run. `start()` connects every enabled server in parallel and lists
    its tools; `tools()` offers them; `close()` shuts everything down (idempotent, also at exit)."""

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        cwd: Path,
        env: Mapping[str, str],
        log_dir: Path | None = None,
        start: StartPlace | None = None,
        redactor: Redactor | None = None,
        screen: PromptScreen | None = None,
    ) -> None:
        self.cwd = cwd
        self.env = dict(env)
        self.log_dir = log_dir
        # Where stdio servers start (launch.py): a fresh folder of arreio's own outside the project (npx
        # looks for packages in every folder above the one it starts in), removed when the hub closes.
        start = start or StartPlace(untrusted=(Path(cwd).resolve(),))
        self._own_home = start.home is None
        home = Path(tempfile.mkdtemp(prefix="arreio-mcp-")) if start.home is None else start.home
        self.start_place = dataclasses.replace(start, home=home)
        self.redactor = redactor or Redactor.from_env(self.env)  # the logs': the run's, or the servers' env's
        self._conns = {name: Connection(name, cfg) for name, cfg in servers.items()}
        logs.route_sdk_logging()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="arreio-mcp", daemon=True)
        self._thread.start()
        self._closed = False
        self._lock = threading.Lock()
        self._pending: list[str] = []  # warnings not yet shown (drained by the run's hook)
        self.warnings: list[str] = []  # every warning of the run, for the report
        self._gone: set[str] = set()  # offered names a re-listing no longer lists
        self.screen = Screen(screen, self.warn)  # what the servers say about themselves, read before the model sees it

    # -- state ------------------------------------------------------------------------------------
    def states(self) -> list[ServerState]:
        return [c.status for c in self._conns.values()]

    def instructions(self) -> dict[str, str]:
        """Each ready server's `instructions` (from initialize), by server name; empty ones left out."""
        said = {
            c.name: self.screen.instructions(c.name, c.instructions) for c in self._conns.values() if c.instructions
        }
        return {name: text for name, text in said.items() if text and self._conns[name].status.tools}

    def offers(self, server: str, capability: str) -> bool:
        """Whether a ready `server` advertised `capability` (`prompts`, `resources`, …) at start."""
        conn = self._conns[server]
        caps = getattr(conn.client, "server_capabilities", None) if conn.client is not None else None
        return conn.status.state == "ready" and getattr(caps, capability, None) is not None

    def warn(self, message: str) -> None:
        with self._lock:
            self._pending.append(message)
            self.warnings.append(message)

    def drain_warnings(self) -> list[str]:
        with self._lock:
            out, self._pending = self._pending, []
        return out

    def withdrawn(self) -> set[str]:
        """Names of offered tools whose server has stopped (or no longer lists them): later requests
        must not offer them."""
        dead = {n for c in self._conns.values() if c.status.state in ("dead", "closed") for n in c.status.tools}
        return dead | self._gone

    # -- start --------------------------------------------------------------------------------------
    def start(self) -> None:
        """Connect and list, blocking the caller (run assembly) until every server answered or failed."""
        live = [c for c in self._conns.values() if c.config.enabled]
        if not live:
            return
        future = asyncio.run_coroutine_threadsafe(self._start_all(live), self._loop)
        future.result(timeout=max(c.config.connect_timeout_s for c in live) + 15)

    async def _start_all(self, conns: list[Connection]) -> None:
        await asyncio.gather(*(self._start_one(c) for c in conns))

    async def _start_one(self, conn: Connection) -> str | None:
        """Start `conn`'s task and wait until it listed; returns why it failed, or None."""
        ready: asyncio.Future = self._loop.create_future()
        conn.stop = asyncio.Event()
        conn.task = self._loop.create_task(self._serve(conn, ready, conn.generation))
        try:
            await asyncio.wait_for(asyncio.shield(ready), conn.config.connect_timeout_s)
        except TimeoutError:
            conn.task.cancel()
            with contextlib.suppress(BaseException):
                await conn.task
            return self._fail(conn, f"did not answer within {conn.config.connect_timeout_s:g}s")
        except Exception as exc:  # noqa: BLE001 — any start-up failure is a warning, never a crash
            return self._fail(conn, connection.describe_error(exc))
        conn.status.state = "ready"
        synthetic = list(RESOURCE_TOOLS) if conn.resources else []
        for message in filter_warnings(conn.name, conn.config, [t.name for t in conn.listing] + synthetic):
            if conn.restarts == 0:  # said once, at the first start
                self.warn(message)
        return None

    def _fail(self, conn: Connection, why: str) -> str:
        conn.status.state, conn.status.detail = "failed", connection.failure_detail(conn, why, self.cwd)
        if conn.restarts == 0:
            self.warn(
                f"{conn.status.detail}; its tools are not available"
                if conn.auth_status is not None
                else f"MCP server '{conn.name}' failed to start: {conn.status.detail} — its tools are not available"
            )
        return conn.status.detail

    async def _serve(self, conn: Connection, ready: asyncio.Future, generation: int) -> None:
        """The connection's whole life, in one task: enter, list, wait for stop, leave."""
        from mcp import Client
        from mcp_types import Implementation

        path = self.log_dir / f"mcp-{conn.name}.log" if self.log_dir else None
        log = conn.log = logs.ServerLog(path, fresh=generation == 0, redactor=self.redactor)  # a restart: appended
        conn.log_mark = log.size()
        logs.bind(log)  # this task's context: every task the SDK starts for the connection inherits it
        try:
            async with contextlib.AsyncExitStack() as stack:
                link = await connection.transport(conn, stack, cwd=self.cwd, env=self.env, start=self.start_place)
                client = Client(
                    link, client_info=Implementation(name="arreio", version="0.1"), message_handler=conn.on_message
                )
                await stack.enter_async_context(client)
                conn.listing = await connection.list_tools(client)
                conn.resources = await connection.list_resources(client)
                conn.instructions = (client.instructions or "").strip()
                conn.client = client
                listener = asyncio.create_task(connection.listen_for_changes(client))
                ready.set_result(True)
                try:
                    await conn.stop.wait()  # type: ignore[union-attr]
                finally:
                    listener.cancel()
                    with contextlib.suppress(BaseException):
                        await listener
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, Exception):
                    ready.set_exception(exc)
                else:  # cancelled (a missed connect_timeout_s): nobody awaits `ready` any more, and an
                    ready.cancel()  # exception set on it would be "Future exception was never retrieved"
            else:
                self._died(conn, connection.describe_error(exc), generation)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            log.close()  # this life's log (a restart has its own)

    # -- tools --------------------------------------------------------------------------------------
    def tools(self) -> list[McpTool]:
        """The tools of every ready server (offered.py)."""
        return [t for conn in self._conns.values() if conn.status.state == "ready" for t in server_tools(self, conn)]

    async def refresh(self) -> dict[str, list[McpTool]]:
        """Before a model call: wait for restarts under way, then re-list each server that said its
        tools changed (or was restarted). Returns the fresh tools of each re-listed server; names a
        server no longer lists are withdrawn (`withdrawn()`)."""
        if self._closed:
            return {}
        if any(c.status.state == "ready" and connection.exited(c.client) for c in self._conns.values()):
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._notice_exits(), self._loop))
        busy = [c for c in self._conns.values() if c.restart is not None and not c.restart.done()]
        stale = [c for c in self._conns.values() if c.changed or c in busy]
        if not stale:
            return {}
        future = asyncio.run_coroutine_threadsafe(self._relist(stale), self._loop)
        return await asyncio.wrap_future(future)

    async def _notice_exits(self) -> None:
        """A server that exited between calls is dead now, not at its next call (a restart can then
        be under way, or its tools withdrawn, before the model is asked)."""
        for conn in self._conns.values():
            if conn.status.state == "ready" and connection.exited(conn.client):
                self._died(conn, "it exited between calls", conn.generation)

    async def _relist(self, conns: list[Connection]) -> dict[str, list[McpTool]]:
        out: dict[str, list[McpTool]] = {}
        for conn in conns:
            if conn.restart is not None:
                with contextlib.suppress(BaseException):
                    await conn.restart
            if conn.status.state != "ready" or not conn.changed:
                continue
            conn.changed = False
            before = set(conn.status.tools)
            try:
                conn.listing = await asyncio.wait_for(connection.list_tools(conn.client), conn.config.connect_timeout_s)
            except Exception:  # noqa: BLE001, S112 — keep the old listing; a dead server is noticed on its next call
                continue
            fresh = server_tools(self, conn)
            now = set(conn.status.tools)
            self._gone = (self._gone | (before - now)) - now
            out[conn.name] = fresh
        return out

    # -- calls --------------------------------------------------------------------------------------
    async def call(self, server: str, remote: str, arguments: dict[str, Any], timeout_s: float) -> ToolResult:
        """Call a tool from any event loop; failures are `ToolError`s the chain turns into data."""
        conn = self._conns[server]
        if remote not in {t.name for t in conn.listing} and conn.status.state == "ready":
            raise ToolError(f"MCP server '{server}' no longer offers the tool '{remote}' (its tool list changed)")
        result = await self.request(
            server, lambda client: client.call_tool(remote, arguments, read_timeout_seconds=timeout_s), timeout_s
        )
        return normalise_result(result)

    async def request(self, server: str, send: Callable[[Any], Awaitable[Any]], timeout_s: float) -> Any:
        """One request to `server` (`send(client)`), from any event loop, waiting out a restart under
        way; the SDK's failures become `ToolError`s (a timeout is transient)."""
        conn = self._conns[server]
        if conn.restart is not None and not conn.restart.done() and not self._closed:
            with contextlib.suppress(BaseException):
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(_wait(conn.restart), self._loop))
        if conn.status.state != "ready" or self._closed:
            raise ToolError(self._gone_text(conn))
        future = asyncio.run_coroutine_threadsafe(self._request(conn, send, timeout_s), self._loop)
        return await asyncio.wrap_future(future)

    async def _request(self, conn: Connection, send: Callable[[Any], Awaitable[Any]], timeout_s: float) -> Any:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        if conn.log is not None:
            logs.bind(conn.log)  # this call's task: what the SDK logs about it goes to the server's log
            conn.log_mark = conn.log.size()
        conn.auth_status = None
        if conn.status.state == "ready" and connection.exited(conn.client):  # it died before this call, not of it:
            self._died(conn, "it exited between calls", conn.generation)  # restart, then send
            if conn.restart is not None:
                await _wait(conn.restart)
            if conn.status.state != "ready":
                raise ToolError(self._gone_text(conn))
            if conn.log is not None:
                logs.bind(conn.log)
                conn.log_mark = conn.log.size()
        generation = conn.generation
        try:
            return await send(conn.client)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise ToolError(
                    f"timed out after {timeout_s:g}s waiting for MCP server '{conn.name}'", transient=True
                ) from None
            if exc.code == CONNECTION_CLOSED:
                self._died(conn, "its connection closed", generation)
                raise ToolError(self._gone_text(conn, during_call=True)) from None
            if conn.auth_status is not None:
                raise ToolError(connection.auth_failed(conn)) from None
            raise ToolError(f"MCP server '{conn.name}' refused the request: {exc}") from None

    def _gone_text(self, conn: Connection, *, during_call: bool = False) -> str:
        return connection.gone_text(conn, hub_closed=self._closed, during_call=during_call)

    def _died(self, conn: Connection, why: str, generation: int) -> None:
        if conn.status.state != "ready" or generation != conn.generation or self._closed:
            return  # already known, or a late word about a process that was replaced
        tail = conn.log.tail(since=conn.log_mark) if conn.log else ""
        said = f"; its stderr ends: {tail}" if tail else "; it wrote nothing to stderr during the call"
        detail = why + said
        if conn.may_restart():
            conn.restarts += 1
            conn.generation += 1
            conn.status.state, conn.status.detail = "restarting", detail
            self.warn(f"MCP server '{conn.name}' stopped mid-run ({detail}); restarting it (once per run)")
            conn.restart = self._loop.create_task(self._restart(conn))
            return
        conn.status.state, conn.status.detail = "dead", detail
        again = " again" if conn.restarts else ""
        self.warn(
            f"MCP server '{conn.name}' stopped{again} mid-run ({detail}); its tools are withdrawn "
            "for the rest of the run"
        )

    async def _restart(self, conn: Connection) -> None:
        """Start a dead server's process again; its old task is told to leave first (it cleans up
        the dead process's pipes)."""
        old_stop, old_task = conn.stop, conn.task
        if old_stop is not None:
            old_stop.set()
        if old_task is not None:
            await asyncio.wait([old_task], timeout=3)
        conn.client, conn.told = None, False
        why = await self._start_one(conn)
        if why is None:
            conn.changed = True  # the new process may list other tools: re-list at the next step
            conn.status.detail = f"restarted once, after: {conn.status.detail}"
            return
        conn.status.state = "dead"
        self.warn(
            f"MCP server '{conn.name}' could not be restarted ({why}); its tools are withdrawn for the rest of the run"
        )

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
        if self._own_home and self.start_place.home is not None:
            shutil.rmtree(self.start_place.home, ignore_errors=True)

    async def _close_all(self) -> None:
        tasks = []
        for conn in self._conns.values():
            if conn.restart is not None and not conn.restart.done():
                conn.restart.cancel()
                with contextlib.suppress(BaseException):
                    await conn.restart
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


async def _wait(future: asyncio.Future) -> None:
    with contextlib.suppress(BaseException):
        await asyncio.shield(future)

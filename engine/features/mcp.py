"""`McpFeature`: the configured MCP servers' tools (`<server>__<tool>`) in every run. It connects at
run start and closes at run end (and at interpreter exit, as a backstop for a run that never reached
its end). A server that fails to start or dies is a warning event, not a failed run:

- its namespace stays known to the resolver (`absent_namespaces`), so `--no-tools 'fx__*'` or a
  `tools_disabled` entry naming a server that did not start is a warning, not a config error;
- a stdio server that dies mid-run is restarted once; if it dies again its tools are withdrawn from
  every later model request (`McpHook`), which also re-lists a server whose tool list changed;
- a server's `instructions` enter a new session's system prompt when some of its tools are offered;
  they and its tools' descriptions pass the run's `PromptScreen` first (`screen.py`).

While the servers start, a terminal sees one transient status line on stderr ("connecting to 2 MCP
servers…"): see `terminal_status` for why the engine, which otherwise speaks only through events,
writes it."""

from __future__ import annotations

import atexit
import contextlib
import sys
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from arreio.engine.core.ports import PromptScreen, SystemPromptBlockSource
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import Rewrite, RunHook, Turn, WarningsHook
from arreio.engine.loop.report import Section
from arreio.engine.tools.run_context import RunContext

if TYPE_CHECKING:
    from arreio.engine.core.model_io import ModelRequest, ToolSpec
    from arreio.engine.loop.report import RunReport
    from arreio.engine.tools.base import Tool
    from arreio.engine.tools.mcp.connection import StartPlace
    from arreio.engine.tools.mcp.hub import McpHub

_OPEN_HUBS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_open_hubs() -> None:  # pragma: no cover — exercised by processes that exit mid-run
    for hub in list(_OPEN_HUBS):
        hub.close()


@contextlib.contextmanager
def terminal_status(text: str, stream: TextIO | None = None) -> Iterator[None]:
    """Show `text` on a terminal's stderr while the block runs, then erase it.

    The hub starts while the run is assembled (`Feature.tools` is synchronous and comes before the
    first event), so no event can say "connecting…" in time; a start that waits on a slow server
    would otherwise look hung. It is written only when stderr is a terminal — never to a pipe, a
    file, CI or `--json` stdout — and erased afterwards, so no reader of the run's output sees it.
    (A `progress` callback on the run's dependencies, shown by the CLI's renderer, would be the
    cleaner home; the run command is another room's, so it lives here until then.)"""
    out = stream if stream is not None else sys.stderr
    shown = _isatty(out)
    if shown:
        out.write(f"arreio: {text}")
        out.flush()
    try:
        yield
    finally:
        if shown:
            out.write("\r\x1b[K")  # back to the line's start and clear it
            out.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


class McpHook(WarningsHook):
    """The hub's warnings as `warning` events, and a dead server's tools withdrawn from each request
    (the model is not offered what no longer answers; the call that found it dead said why)."""

    def __init__(self, hub: McpHub) -> None:
        super().__init__(hub.drain_warnings, "mcp")
        self.hub = hub

    async def before_model(self, turn: Turn, request: ModelRequest) -> Rewrite | None:
        offered = request.tools
        fresh = await self.hub.refresh()  # a server said its tools changed, or was restarted
        if fresh:
            offered = self._offer(turn, offered, [t for tools in fresh.values() for t in tools])
        gone = self.hub.withdrawn()
        if gone and offered:
            offered = [t for t in offered if t.name not in gone]
        return Rewrite(tools=offered) if offered is not request.tools else None

    @staticmethod
    def _offer(turn: Turn, offered: list[ToolSpec], tools: list[Tool]) -> list[ToolSpec]:
        """Tools a re-listing found that the run does not have yet: registered (so calls reach them)
        and added to this request — if the run's own allow/deny would have offered them at start
        (a sub-agent's or a unit's narrowed set adds none), and not on a landing turn (no tools)."""
        registry = turn.tools
        admits = getattr(registry, "admits", None)
        if admits is None:
            return offered
        added = []
        for tool in tools:
            if getattr(tool, "withheld", None) is None and tool.name not in registry and admits(tool.name):
                registry.register(tool)
                families = getattr(registry, "families", None)
                if families is not None:
                    families[tool.name] = "mcp"
                added.append(tool.name)
        if added and offered:
            return [*offered, *(s for s in registry.specs() if s.name in added)]
        return offered


def configured(ctx: RunContext) -> dict[str, Any]:
    """The run's `mcp_servers:` section, parsed once per run. Most runs have none: they import
    neither its models nor the client (~8 ms at every start), only a run with a server does."""
    if not ctx.settings.mcp_servers:
        return {}
    from arreio.engine.tools.mcp.config import mcp_servers

    return ctx.section(mcp_servers)


class McpFeature(Feature):
    """MCP servers from `mcp_servers:`. One hub per run; tools() may be asked twice while a run is
    assembled (the new session's prompt, then the run), so the open hub is reused."""

    name = "mcp"

    def check(self, ctx: RunContext) -> None:
        configured(ctx)

    def __init__(self, screen: PromptScreen | None = None) -> None:
        self._screen = screen  # reads the servers' instructions and tool descriptions (cli/deps.py: the memory scan)
        self._hub: McpHub | None = None
        self._offered: list[str] = []  # the run's resolved tool names (the instructions block's condition)
        self._excluded: set[str] = set()  # servers not started: every tool of theirs is excluded this run
        self._selectors: tuple[list[str] | None, list[str]] = (None, [])

    def start(self, ctx: RunContext) -> McpFeature:
        """The run's own hub and selectors: a chat's next message, or a concurrent run, starts its own."""
        return McpFeature(self._screen)

    def tools_selected(self, ctx: RunContext, enable: list[str] | None, disable: list[str]) -> None:
        """Called by the resolver before `tools`: the run's allow- and deny-lists."""
        self._selectors = (enable, disable)

    def _startable(self, ctx: RunContext) -> dict[str, Any]:
        """The enabled servers this run may offer a tool of: one whose every tool is excluded (`--no-tools
        'fx__*'`, an allow-list naming none of it, its own `tools.allow: []`) is not started."""
        servers = configured(ctx)
        if not servers:
            return {}
        from arreio.engine.features.resolver import excludes_namespace
        from arreio.engine.tools.mcp.config import SEP

        enable, disable = self._selectors
        out = {}
        for name, config in servers.items():
            if not config.enabled:
                continue
            if excludes_namespace(name + SEP, enable, disable) or config.tools.allow == []:
                self._excluded.add(name)
                continue
            out[name] = config
        return out

    def tools_resolved(self, ctx: RunContext, resolved: Any) -> None:
        """Called by the resolver: which tools this run offers (a server's instructions enter the
        prompt only when some of its tools do)."""
        self._offered = list(resolved.names())

    def prompt_blocks(self, ctx: RunContext) -> list[SystemPromptBlockSource]:
        hub = self._hub
        if hub is None:
            return []
        from arreio.engine.tools.mcp.instructions import InstructionsBlock

        return [InstructionsBlock(hub.instructions, lambda: self._offered)]

    def tools(self, ctx: RunContext) -> list[Tool]:
        servers = self._startable(ctx) if self._hub is None else {}
        enabled = len(servers)
        if self._hub is None and not enabled:
            return []
        if self._hub is None:
            from arreio.engine.tools.mcp.hub import McpHub

            self._hub = McpHub(
                servers,
                cwd=ctx.cwd,
                env=ctx.env,
                log_dir=ctx.state_dir / "logs",
                start=start_place(ctx),
                redactor=ctx.redactor,
                screen=self._screen,
            )
            _OPEN_HUBS.add(self._hub)
            with terminal_status(f"connecting to {enabled} MCP server{'s' if enabled > 1 else ''}…"):
                self._hub.start()
        return list(self._hub.tools())

    def absent_namespaces(self, ctx: RunContext) -> dict[str, str]:
        """`<server>__` → why none of its tools is offered, for each configured server that is not
        ready (disabled, failed to start). The resolver takes a name or pattern in these namespaces
        that matches nothing as a warning: the user named a real server, it is just not up."""
        servers = configured(ctx)
        if not servers:
            return {}
        from arreio.engine.tools.mcp.config import SEP

        states = {s.name: s for s in self._hub.states()} if self._hub is not None else {}
        out: dict[str, str] = {}
        for name, config in servers.items():
            state = states.get(name)
            if not config.enabled:
                out[name + SEP] = f"MCP server '{name}' is disabled in config (enabled: false)"
            elif name in self._excluded:
                out[name + SEP] = ""  # not started on purpose: the selectors exclude every tool of it
            elif state is None:
                out[name + SEP] = f"MCP server '{name}' was not started"
            elif state.state == "failed":
                out[name + SEP] = f"MCP server '{name}' failed to start"
            elif state.state != "ready":
                out[name + SEP] = f"MCP server '{name}' is {state.state}"
        return out

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        hub = self._hub
        return [McpHook(hub)] if hub is not None else []

    def after_run(self, ctx: RunContext, report: RunReport) -> Section | None:
        if self._hub is None:
            return None
        warnings = tuple(self._hub.warnings)
        self.close()
        return Section(warnings=warnings)

    def close(self) -> None:
        """Shut the servers down now (run end, Ctrl-C: the pipeline's `finally` reaches after_run)."""
        hub, self._hub = self._hub, None
        if hub is not None:
            hub.close()


def start_place(ctx: RunContext) -> StartPlace:
    """How the run's stdio servers start (`launch.py`): never a program from a place the agent can
    write, and in the run's sandbox when they would run the agent's files (or `sandbox: true`)."""
    from arreio.engine.tools.mcp.connection import StartPlace
    from arreio.engine.tools.sandbox import run_sandbox

    sandbox = run_sandbox(ctx)

    def wrap(argv: list[str]) -> tuple[list[str] | None, str | None]:
        plan = sandbox.plan()
        if plan is None:
            return None, sandbox.found.reason or "the sandbox is off"
        return [plan.bwrap, *plan.args, "--", *argv], None

    return StartPlace(untrusted=tuple(sandbox.writable), wrap=wrap)


def start_place_for(cwd: Path, env: Mapping[str, str], settings: Any, state: Path) -> StartPlace:
    """`start_place` for a command outside a run (`arreio mcp list`, `doctor`, prompts)."""
    from arreio.engine.tools.run_context import RunContext as Context

    return start_place(Context(cwd=cwd, env=env, settings=settings, state_dir=state, run_id="mcp"))

"""`arreio mcp`: the MCP servers in config — list them with their state and tools, test one.

Only typer/rich/stdlib at import time; the `mcp` package is imported when a server is connected.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

app = typer.Typer(help="MCP servers from config: list them with their state and tools, or test one.",
                  no_args_is_help=True)


def _settings() -> tuple[Any, Any]:
    from pathlib import Path

    from arreio.engine.config import load_settings
    from arreio.engine.tools.mcp.config import parse_mcp_servers

    settings = load_settings(Path.cwd())
    return settings, parse_mcp_servers(settings.mcp_servers)


def _connect(servers: dict[str, Any]) -> tuple[list[Any], dict[str, list[dict[str, Any]]]]:
    """Connect, list, close; returns each server's state (failed ones say why) and, per server, its
    tools as `_tool_json` rows."""
    import os
    from contextlib import nullcontext
    from pathlib import Path

    from arreio.engine.paths import state_dir
    from arreio.engine.tools.mcp.feature import terminal_status
    from arreio.engine.tools.mcp.hub import McpHub

    cwd = Path.cwd()
    hub = McpHub(servers, cwd=cwd, env=dict(os.environ), log_dir=state_dir(cwd) / "logs")
    try:
        live = sum(1 for c in servers.values() if c.enabled)
        with terminal_status(f"connecting to {live} MCP server{'s' if live != 1 else ''}…") if live else nullcontext():
            hub.start()
        tools: dict[str, list[dict[str, Any]]] = {}
        for tool in hub.tools():  # also fills each ready server's offered names
            tools.setdefault(tool.server, []).append(_tool_json(tool))
        return hub.states(), tools
    finally:
        hub.close()


def _tool_json(tool: Any) -> dict[str, Any]:
    """One tool as `--json` shows it: what the model would see, and whether it is offered at all."""
    return {"name": tool.name, "server_name": tool.remote, "description": tool.remote_description,
            "input_schema": tool.input_schema(), "read_only": tool.read_only, "offered": tool.withheld is None,
            **({"withheld": tool.withheld} if tool.withheld else {})}


def _state_json(state: Any, target: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    state_name = "ready" if state.state == "closed" else state.state
    return {"name": state.name, "transport": state.transport, "target": target, "state": state_name,
            "detail": state.detail, "tools": tools}


@app.command("list")
def list_servers(
    connect: Annotated[bool, typer.Option("--connect/--no-connect", help="Start each server to show its state and tools.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Show configured servers, whether they start, and the tools they offer."""
    from arreio.engine.tools.mcp.config import describe
    from arreio.engine.tools.mcp.hub import ServerState

    _, servers = _settings()
    tools: dict[str, list[dict[str, Any]]] = {}
    if connect:
        found, tools = _connect(servers)
        states = {s.name: s for s in found}
    else:
        states = {n: ServerState(n, c.transport, "disabled" if not c.enabled else "not started") for n, c in servers.items()}
    rows = [_state_json(states[name], describe(cfg), tools.get(name, [])) for name, cfg in servers.items()]
    if as_json:
        typer.echo(json.dumps({"servers": rows}, indent=2))
        return
    if not rows:
        typer.echo("no MCP servers configured (add an `mcp_servers:` section to .arreio/config.yaml)")
        return
    from rich.console import Console
    from rich.table import Table

    from arreio.cli.inert import shown as escape  # markup-safe and inert

    table = Table(show_header=True, header_style="bold")
    for column in ("server", "transport", "target", "state", "tools"):
        table.add_column(column, overflow="fold")
    for row in rows:
        colour = {"ready": "green", "failed": "red", "dead": "red"}.get(row["state"], "dim")
        state = f"[{colour}]{row['state']}[/{colour}]" + (f"\n{escape(row['detail'])}" if row["detail"] else "")
        offered = [t["name"] for t in row["tools"] if t["offered"]]
        withheld = [t["name"] for t in row["tools"] if not t["offered"]]
        tools = f"{len(offered)}: " + ", ".join(offered) if offered else "-"
        if withheld:
            tools += f"\nwithheld by tools allow/deny: {', '.join(withheld)}"
        table.add_row(row["name"], row["transport"], escape(row["target"]), state, escape(tools))
    Console().print(table)


@app.command("test")
def test_server(
    name: Annotated[str, typer.Argument(help="The server's name in mcp_servers.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Connect to one server (even a disabled one), list its tools, and disconnect. Exit 1 if it fails."""
    from arreio.engine.errors import UsageError
    from arreio.engine.tools.mcp.config import describe

    _, servers = _settings()
    if name not in servers:
        known = ", ".join(servers) or "(none configured)"
        raise UsageError(f"no MCP server named '{name}' in config; configured: {known}")
    config = servers[name].model_copy(update={"enabled": True})
    states, tools = _connect({name: config})
    row = _state_json(states[0], describe(config), tools.get(name, []))
    if as_json:
        typer.echo(json.dumps(row, indent=2))
    elif row["state"] == "ready":
        offered = [t for t in row["tools"] if t["offered"]]
        typer.echo(f"{name}: ok ({config.transport}: {row['target']}) · {len(offered)} tool(s)")
        for tool in row["tools"]:
            typer.echo(f"  {tool['name']}" + ("" if tool["offered"] else f"  (withheld: {tool['withheld']})"))
    else:
        typer.echo(f"{name}: {row['state']} — {row['detail']}", err=True)
    if row["state"] != "ready":
        raise typer.Exit(1)

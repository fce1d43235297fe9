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


def _connect(servers: dict[str, Any]) -> list[Any]:
    """Connect, list, close; returns each server's state (failed ones say why)."""
    import os
    from pathlib import Path

    from arreio.engine.paths import state_dir
    from arreio.engine.tools.mcp.hub import McpHub

    cwd = Path.cwd()
    hub = McpHub(servers, cwd=cwd, env=dict(os.environ), log_dir=state_dir(cwd) / "logs")
    try:
        hub.start()
        hub.tools()  # fills each ready server's offered names
        return hub.states()
    finally:
        hub.close()


def _state_json(state: Any, target: str) -> dict[str, Any]:
    state_name = "ready" if state.state == "closed" else state.state
    return {"name": state.name, "transport": state.transport, "target": target, "state": state_name,
            "detail": state.detail, "tools": state.tools}


@app.command("list")
def list_servers(
    connect: Annotated[bool, typer.Option("--connect/--no-connect", help="Start each server to show its state and tools.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Show configured servers, whether they start, and the tools they offer."""
    from arreio.engine.tools.mcp.config import describe
    from arreio.engine.tools.mcp.hub import ServerState

    _, servers = _settings()
    if connect:
        states = {s.name: s for s in _connect(servers)}
    else:
        states = {n: ServerState(n, c.transport, "disabled" if not c.enabled else "not started") for n, c in servers.items()}
    rows = [_state_json(states[name], describe(cfg)) for name, cfg in servers.items()]
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
        tools = f"{len(row['tools'])}: " + ", ".join(row["tools"]) if row["tools"] else "-"
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
    state = _connect({name: config})[0]
    row = _state_json(state, describe(config))
    if as_json:
        typer.echo(json.dumps(row, indent=2))
    elif row["state"] == "ready":
        typer.echo(f"{name}: ok ({config.transport}: {row['target']}) · {len(row['tools'])} tool(s)")
        for tool in row["tools"]:
            typer.echo(f"  {tool}")
    else:
        typer.echo(f"{name}: {row['state']} — {row['detail']}", err=True)
    if row["state"] != "ready":
        raise typer.Exit(1)

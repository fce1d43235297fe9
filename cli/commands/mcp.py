"""`arreio mcp`: the MCP servers in config — list them with their state and tools, test one, list
or render their prompts — and `arreio mcp serve`, arreio itself as an MCP server (api/mcp_server.py).

Only typer/rich/stdlib at import time; the `mcp` package is imported when a server is connected.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from arreio.engine.core.ports import process_env
from arreio.engine.core.wording import counted

app = typer.Typer(
    help="MCP servers from config: list them with their state and tools, test one, list their prompts; "
    "serve arreio itself over MCP.",
    no_args_is_help=True,
)


def _settings() -> tuple[Any, Any]:
    from pathlib import Path

    from arreio.engine.core.config import load_settings
    from arreio.engine.tools.mcp.config import parse_mcp_servers

    settings = load_settings(Path.cwd())
    return settings, parse_mcp_servers(settings.mcp_servers)


def _connect(servers: dict[str, Any]) -> tuple[list[Any], dict[str, list[dict[str, Any]]]]:
    """Connect, list, close; returns each server's state (failed ones say why) and, per server, its
    tools as `_tool_json` rows."""
    from contextlib import nullcontext
    from pathlib import Path

    from arreio.engine.core.config import load_settings
    from arreio.engine.core.paths import state_dir
    from arreio.engine.features.mcp import start_place_for, terminal_status
    from arreio.engine.tools.mcp.hub import McpHub

    cwd = Path.cwd()
    env = process_env()
    start = start_place_for(cwd, env, load_settings(cwd, env), state_dir(cwd, env))
    hub = McpHub(servers, cwd=cwd, env=env, log_dir=state_dir(cwd, env) / "logs", start=start)
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
    return {
        "name": tool.name,
        "server_name": tool.remote,
        "description": tool.remote_description,
        "input_schema": tool.input_schema(),
        "read_only": tool.read_only,
        "offered": tool.withheld is None,
        **({"withheld": tool.withheld} if tool.withheld else {}),
    }


def _state_json(state: Any, target: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    state_name = "ready" if state.state == "closed" else state.state
    return {
        "name": state.name,
        "transport": state.transport,
        "target": target,
        "state": state_name,
        "detail": state.detail,
        "tools": tools,
    }


@app.command("list")
def list_servers(
    connect: Annotated[
        bool, typer.Option("--connect/--no-connect", help="Start each server to show its state and tools.")
    ] = True,
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
        states = {
            n: ServerState(n, c.transport, "disabled" if not c.enabled else "not started") for n, c in servers.items()
        }
    rows = [_state_json(states[name], describe(cfg), tools.get(name, [])) for name, cfg in servers.items()]
    if as_json:
        typer.echo(json.dumps({"servers": rows}, indent=2))
        return
    if not rows:
        typer.echo("no MCP servers configured (add an `mcp_servers:` section to .arreio/config.yaml)")
        return
    from arreio.cli.render import console_for, isatty

    if not isatty(sys.stdout):  # a pipe gets a line per server (a boxed table there was ~600 columns wide)
        for line in _plain_lines(rows):
            typer.echo(line)
        return
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
        table.add_row(escape(row["name"]), row["transport"], escape(row["target"]), state, escape(tools))
    console_for().print(table)  # a pipe gets whole lines, not 80 columns


def _plain_lines(rows: list[dict[str, Any]]) -> list[str]:
    """`name: state (transport: target) · N tools: a, b` per server, what went wrong after a dash, and
    withheld tools on an indented line: whole lines for `grep` and `cut`, as `mcp test` prints."""
    from arreio.cli.inert import flat, inert  # what a server says is shown, never acted on by the terminal

    lines = []
    for row in rows:
        offered = [t["name"] for t in row["tools"] if t["offered"]]
        withheld = [t["name"] for t in row["tools"] if not t["offered"]]
        tools = (
            f" · {counted(len(offered), 'tool')}" + (f": {', '.join(offered)}" if offered else "")
            if row["state"] == "ready"
            else ""
        )
        detail = f" — {flat(row['detail'])}" if row["detail"] else ""
        lines.append(inert(f"{row['name']}: {row['state']} ({row['transport']}: {row['target']}){tools}{detail}"))
        if withheld:
            lines.append(inert(f"  withheld by tools allow/deny: {', '.join(withheld)}"))
    return lines


@app.command("test")
def test_server(
    name: Annotated[str, typer.Argument(help="The server's name in mcp_servers.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Connect to one server (even a disabled one), list its tools, and disconnect. Exit 1 if it fails."""
    from arreio.engine.core.errors import UsageError
    from arreio.engine.tools.mcp.config import describe

    _, servers = _settings()
    if name not in servers:
        known = ", ".join(servers) or "(none configured)"
        raise UsageError(f"no MCP server named '{name}' in config; configured: {known}")
    config = servers[name].model_copy(update={"enabled": True})
    states, tools = _connect({name: config})
    row = _state_json(states[0], describe(config), tools.get(name, []))
    from arreio.cli.inert import inert  # what a server says is shown, never acted on by the terminal

    if as_json:
        typer.echo(json.dumps(row, indent=2))
    elif row["state"] == "ready":
        offered = [t for t in row["tools"] if t["offered"]]
        typer.echo(inert(f"{name}: ok ({config.transport}: {row['target']}) · {counted(len(offered), 'tool')}"))
        for tool in row["tools"]:
            typer.echo(inert(f"  {tool['name']}" + ("" if tool["offered"] else f"  (withheld: {tool['withheld']})")))
    else:
        typer.echo(inert(f"{name}: {row['state']} — {row['detail']}"), err=True)
    if row["state"] != "ready":
        raise typer.Exit(1)


def _prompts() -> Any:
    from pathlib import Path

    from arreio.engine.core.paths import state_dir
    from arreio.engine.tools.mcp.prompts import Prompts

    _, servers = _settings()
    cwd = Path.cwd()
    return Prompts(servers, cwd=cwd, env=process_env(), log_dir=state_dir(cwd) / "logs")


@app.command("prompts")
def prompts(
    name: Annotated[
        str | None,
        typer.Argument(
            metavar="[NAME]",
            help="A prompt (SERVER/NAME, or NAME when only one "
            "server offers it) to show; a SERVER name lists only its prompts.",
            show_default=False,
        ),
    ] = None,
    args: Annotated[
        list[str] | None,
        typer.Option(
            "--arg",
            metavar="KEY=VALUE",
            help="With NAME: render the prompt with these arguments (repeatable).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """List the prompts the MCP servers offer (name, description, arguments), or show one.

    A prompt can be a run's goal: `arreio run --mcp-prompt SERVER/NAME --arg KEY=VALUE`."""
    from arreio.engine.tools.mcp.prompts import parse_args, parse_ref

    catalogue = _prompts()
    if name is not None and "/" not in name and name in catalogue.servers:  # a server: its prompts only
        found, problems = catalogue.catalogue(name)
        _print_prompts(found, problems, as_json)
        return
    if name is None:
        if args:
            from arreio.engine.core.errors import UsageError

            raise UsageError("--arg renders one prompt: name it (arreio mcp prompts SERVER/NAME --arg KEY=VALUE)")
        found, problems = catalogue.catalogue()
        _print_prompts(found, problems, as_json)
        return
    parse_ref(name)
    given = parse_args(args or [])
    prompt = catalogue.find(name)
    text = catalogue.goal(name, given) if args is not None else None
    if as_json:
        typer.echo(json.dumps({**prompt.as_json(), **({"rendered": text} if text is not None else {})}, indent=2))
        return
    from arreio.cli.inert import inert  # what a server says is shown, never acted on by the terminal

    typer.echo(inert(f"{prompt.ref}" + (f" — {prompt.description}" if prompt.description else "")))
    for arg in prompt.arguments:
        need = "required" if arg["required"] else "optional"
        typer.echo(
            inert(f"  --arg {arg['name']}=…  ({need})" + (f"  {arg['description']}" if arg["description"] else ""))
        )
    if not prompt.arguments:
        typer.echo("  (no arguments)")
    if text is not None:
        typer.echo("\n" + inert(text))
    else:
        typer.echo(
            inert(
                f"\nrun it: arreio run --mcp-prompt {prompt.ref}"
                + "".join(f" --arg {a['name']}=…" for a in prompt.arguments if a["required"])
            )
        )


def _print_prompts(found: list[Any], problems: list[str], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps({"prompts": [p.as_json() for p in found], "problems": problems}, indent=2))
        return
    from arreio.cli.inert import inert  # what a server says is shown, never acted on by the terminal

    for line in problems:
        typer.echo(inert(f"arreio: {line}"), err=True)
    if not found:
        typer.echo("no MCP prompts offered" + ("" if problems else " (no configured server lists any)"))
        return
    width = max(len(p.ref) for p in found)
    for prompt in found:
        typer.echo(inert(f"{prompt.ref.ljust(width)}  {prompt.description or '-'}  [args: {prompt.signature()}]"))


def prompt_goal(ref: str, pairs: list[str]) -> str:
    """`arreio run --mcp-prompt SERVER/NAME --arg K=V`: the prompt rendered by its server, as the
    run's goal. Bad usage (unknown prompt, missing or unknown argument) is a `UsageError`."""
    from arreio.engine.features.mcp import terminal_status
    from arreio.engine.tools.mcp.prompts import parse_args, parse_ref

    parse_ref(ref)
    given = parse_args(pairs)
    with terminal_status(f"getting prompt {ref}…"):
        return _prompts().goal(ref, given)


@app.command("serve")
def serve(
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help="Model for calls that name none (default: config, as `arreio run`)."),
    ] = None,
    max_steps: Annotated[
        int | None, typer.Option("--max-steps", min=1, help="Step limit for calls that give none.")
    ] = None,
    script: Annotated[
        str | None,
        typer.Option(
            "--script",
            help="Play this offline script for every call (as "
            "`arreio run --script`): test an MCP client against arreio.",
        ),
    ] = None,
) -> None:
    """Serve arreio over MCP on stdio: tools `run` (goal, cwd, model, max_steps → final answer, verdict,
    session id) and `continue` (session_id, instruction). Each call is one run with the working
    directory's config, sandbox and policy; approvals a person would give are refused. For an MCP
    client's config: command `arreio`, args `["mcp", "serve"]`."""
    import sys

    if sys.stdin.isatty():
        print(
            "arreio mcp serve speaks MCP on stdin/stdout: start it from an MCP client "
            '(command `arreio`, args ["mcp", "serve"]); Ctrl-D or Ctrl-C ends it',
            file=sys.stderr,
        )
    from pathlib import Path

    from arreio.api.mcp_server import serve as serve_stdio
    from arreio.engine.core.errors import UsageError

    if script is not None and not Path(script).is_file():
        raise UsageError(f"--script {script}: no such file")
    try:
        serve_stdio(model=model, max_steps=max_steps, script=Path(script).resolve() if script else None)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None

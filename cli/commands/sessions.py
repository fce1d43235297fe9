"""`arreio sessions`: list, show and repair saved sessions (export and search: sessions_find.py)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from arreio.engine.core.wording import counted

app = typer.Typer(help="Inspect, export, search and repair saved sessions.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _store():
    from arreio.engine.core.paths import state_dir
    from arreio.engine.session.store import SessionStore

    return SessionStore(state_dir() / "sessions")


@app.command("list")
def list_sessions(json_output: JsonFlag = False) -> None:
    """List saved sessions, newest first."""
    import json

    rows = _store().list()
    if json_output:
        print(json.dumps([r.model_dump(mode="json") for r in rows], ensure_ascii=False, indent=2))
        return
    from rich.table import Table

    from arreio.cli.inert import shown as escape  # markup-safe and inert
    from arreio.cli.render import console_for

    console = console_for()  # a pipe gets every column whole (`arreio sessions list | cat`), not 80 columns
    if not rows:
        console.print('no sessions yet (start one with `arreio run "GOAL"` or `arreio chat`)')
        return
    table = Table(box=None, pad_edge=False)
    # Everything but the title keeps its full width; the title takes what is left.
    for column in ("id", "created", "model", "msgs", "last run", "cost"):
        table.add_column(column, no_wrap=True, min_width=max(len(column), *(len(_cells(r)[column]) for r in rows)))
    table.add_column("title", no_wrap=True, overflow="ellipsis", ratio=1)
    for r in rows:
        cells = _cells(r)
        verdict = f"[red]{cells['last run']}[/red]" if r.error else cells["last run"]
        # the title is the goal's first line, which a file or an MCP server's prompt may have written
        table.add_row(
            cells["id"],
            cells["created"],
            escape(cells["model"]),
            cells["msgs"],
            verdict,
            cells["cost"],
            escape(r.title, one_line=True),
        )
    console.print(table)
    for r in rows:  # a damaged file is listed, and what is wrong with it is said below the table
        if r.error:
            console.print(f"[red]{r.id}[/red]: {escape(r.error)} — see `arreio sessions doctor {r.id}`")


def _cells(r) -> dict[str, str]:
    from arreio.cli.render import money

    ran = r.last_run_verdict is not None and not r.error
    return {
        "id": r.id,
        "created": r.created_at[:16].replace("T", " "),
        "model": r.model,
        "msgs": str(r.messages),
        "last run": "damaged" if r.error else (r.last_run_verdict or "-"),
        "cost": money(r.cost_usd).removeprefix("cost ") if ran else "-",  # the last run's: "$0.036", "unknown"
    }


@app.command("show")
def show(
    session_id: Annotated[str, typer.Argument(help="Session id or a unique prefix.")],
    json_output: JsonFlag = False,
    requests: Annotated[
        bool, typer.Option("--requests", help="Show each model request as it was sent: messages, tools, parameters.")
    ] = False,
) -> None:
    """Show a session's messages (read-only: repairs are listed, not written)."""
    import json

    from arreio.engine.session.file import Session

    store = _store()
    sid = store.resolve(session_id)
    if requests:
        _show_requests(store.path_for(sid), json_output)
        return
    session, repairs = Session.open(store.path_for(sid), repair=False)
    if json_output:
        print(
            json.dumps(
                {
                    "header": session.header.model_dump(mode="json"),
                    "messages": [m.model_dump(mode="json") for m in session.messages],
                    "repairs": [r.model_dump(mode="json") for r in repairs],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    from arreio.cli.inert import call_text
    from arreio.cli.inert import shown as escape  # markup-safe and inert
    from arreio.cli.render import console_for

    c = console_for()  # a pipe gets whole lines: `| grep approve` finds the command unbroken
    h = session.header
    c.print(
        f"[bold]session {h.id}[/bold] · {escape(h.model)} · created {h.created_at} · {len(session.messages)} messages"
    )
    if h.title:
        c.print(f"[dim]{escape(h.title)}[/dim]")
    block = next((b for b in h.system if b.name == "instructions"), None)
    if h.instructions and block is not None:  # what the project's instruction files told this session
        c.print(f"[bold]instructions:[/bold] read {escape(', '.join(h.instructions))}")
        c.print(f"[dim]{escape(block.text)}[/dim]")
    from arreio.engine.governance.approvals import command_to_continue, describe_call, pending_call

    waiting = pending_call(session)
    if waiting is not None:  # what would run, first: the person deciding needs to see it
        shown = call_text(describe_call(waiting.name, waiting.arguments), markup=True)
        c.print(f"[yellow]⏸ waiting for approval:[/yellow] {shown}", soft_wrap=True)
        c.print(
            f"[yellow]  approve with `{command_to_continue(h.id)}` or refuse with "
            f"`{command_to_continue(h.id)} --deny`[/yellow]"
        )
    # Each result is shown under its call (parallel calls were listed, then their results, unpaired);
    # a result whose call is not in the history stays where it is.
    results = {p.call_id: p for m in session.messages for p in m.parts if p.type == "tool_result"}
    calls = {p.id for m in session.messages for p in m.parts if p.type == "tool_call"}

    def result_line(part: Any) -> None:
        first = part.content.strip().splitlines()[0] if part.content.strip() else ""
        style = "red" if part.is_error else "dim"
        status = "" if part.status == "ok" else f"\\[{part.status}] "
        c.print(f"  [{style}]⎿ {status}{escape(first[:160])}[/{style}]")

    for message in session.messages:
        for part in message.parts:
            if part.type == "text":
                who = "user" if message.role == "user" else "assistant"
                c.print(f"[bold]{who}:[/bold] {escape(part.text)}")
            elif part.type == "thinking":
                c.print(f"[dim italic]thinking: {escape(part.thinking[:200])}[/dim italic]")
            elif part.type == "tool_call":
                args = json.dumps(part.arguments, ensure_ascii=False)
                c.print(f"[cyan]● {escape(part.name)}[/cyan] {escape(args[:160])}")  # the model names the tool
                if part.id in results:
                    result_line(results[part.id])
            elif part.type == "tool_result" and part.call_id not in calls:
                result_line(part)
    if repairs:
        c.print(
            f"[yellow]{counted(len(repairs), 'repair')} would be made on load — "
            f"see `arreio sessions doctor {h.id}`[/yellow]"
        )


def _show_requests(path, json_output: bool) -> None:
    """Every recorded model request, rebuilt from the session (engine/governance/requests.py)."""
    import json

    from arreio.cli.inert import inert  # model text and tool output: shown, never acted on by the terminal
    from arreio.engine.governance.requests import reconstruct

    rows = reconstruct(path)
    if json_output:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not rows:
        print(f"no model requests recorded in session {path.stem}")
        return
    shown = 0
    for row in rows:
        check = "exact" if row["exact"] else "history rewritten since (e.g. compaction): approximate"
        tools = ", ".join(row["tool_names"]) or "none (reserve turn)"
        print(
            f"request {row['index']} · {row['model']} · run {row['run_id']} · {row['at']} · "
            f"{len(row['messages'])} messages · max_tokens {row['max_tokens']} · {check}"
        )
        print(f"  tools: {tools}")
        for message in row["messages"][shown:]:
            for part in message["parts"]:
                text = (
                    part.get("text") or part.get("content") or json.dumps(part.get("arguments", {}), ensure_ascii=False)
                )
                label = part["type"] if part["type"] != "text" else message["role"]
                if part["type"] == "tool_call":
                    label = f"call {part['name']}"
                print(inert(f"  + {label}: {' '.join(str(text).split())[:160]}"))
        shown = len(row["messages"])


@app.command("doctor")
def doctor(
    session_id: Annotated[str, typer.Argument(help="Session id or a unique prefix.")],
    fix: Annotated[
        bool, typer.Option("--fix", help="Write the repairs (atomically) instead of only reporting them.")
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    """Report the repairs loading would make (torn tail, orphan calls and results); --fix writes them.
    Exits 1 when repairs are needed and not written (so a script can check a session), else 0."""
    import json

    from arreio.engine.session.file import Session
    from arreio.engine.session.lock import SessionLock

    store = _store()
    sid = store.resolve(session_id)
    # A run in progress has calls in flight that look unfinished: neither report nor "repair" them.
    lock = SessionLock(store.path_for(sid)).acquire(sid)
    try:
        session, repairs = Session.open(store.path_for(sid), repair=fix)
        session.close()
    finally:
        lock.release()
    if json_output:
        print(
            json.dumps(
                {
                    "session": sid,
                    "fixed": fix and bool(repairs),
                    "repairs": [r.model_dump(mode="json") for r in repairs],
                },
                indent=2,
            )
        )
        if repairs and not fix:
            raise typer.Exit(1)
        return
    if not repairs:
        print(f"session {sid}: healthy, nothing to repair")
        return
    print(f"session {sid}: {'made' if fix else 'needs'} {counted(len(repairs), 'repair')}")
    for r in repairs:
        where = f" (line {r.line})" if r.line else ""
        print(f"  - {r.kind}{where}: {r.detail}")
    if not fix:
        print(f"run `arreio sessions doctor {sid} --fix` to write them")
        raise typer.Exit(1)


from arreio.cli.commands import sessions_find  # noqa: E402  (registers `export` and `search` on `app`)

sessions_find.register(app)

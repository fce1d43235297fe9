"""`arreio memory …`: read and edit MEMORY.md / USER.md, and inspect the append-only substores.

Humans go through the same store and the same checks as the model's `memory` tool (the security
scan, the size limit, the drift guard). Library code is imported inside each command so that
`arreio --help` stays fast.
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from arreio.engine.core.ports import process_env

# Mirrors arreio.memory.substores.SUBSTORES (a test keeps them equal); not imported here so that
# loading the CLI does not load pydantic.
SUBSTORE_NAMES = ("episodic", "semantic", "procedural", "decision", "transcript")
STORE_COMMANDS = ("show", "add", "replace", "remove")


class _MemoryGroup(TyperGroup):
    """Turns an unknown sub-command into a clear error that lists the substores."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            from arreio.engine.core.errors import UsageError

            raise UsageError(
                f"unknown memory substore or command {name!r}: substores are {', '.join(SUBSTORE_NAMES)}; "
                f"commands are {', '.join(STORE_COMMANDS)}."
            )
        return super().resolve_command(ctx, args)


app = typer.Typer(
    cls=_MemoryGroup,
    help=f"Read and edit MEMORY.md / USER.md, and list the append-only substores ({', '.join(SUBSTORE_NAMES)}).",
    no_args_is_help=True,
)


class TargetName(str, Enum):
    memory = "memory"
    user = "user"


TargetOption = Annotated[
    TargetName, typer.Option("--target", "-t", help="memory (MEMORY.md, agent notes) or user (USER.md).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _stores() -> Any:

    from arreio.engine.core.config import load_settings
    from arreio.engine.core.paths import state_dir
    from arreio.engine.walls.redact import Redactor
    from arreio.memory.store import MemoryStores

    # The limits a run's memory tool enforces, and its refusal of secrets (the environment's redactor).
    return MemoryStores.configured(state_dir(), load_settings(), redactor=Redactor.from_env(process_env()))


def _write(operation: Any, target: TargetName) -> None:
    from arreio.engine.core.paths import make_state_dir, state_dir
    from arreio.memory.tool import success_message

    make_state_dir(state_dir())  # a folder made here keeps itself out of git (paths.STATE_GITIGNORE)
    stores = _stores()
    result = stores.get(target.value).apply([operation])
    typer.echo(success_message([result]))


@app.command("show")
def show(
    target: Annotated[
        TargetName | None, typer.Option("--target", "-t", help="Only this store (default: both).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Print the entries of MEMORY.md and USER.md, with their usage."""
    from arreio.cli.inert import inert
    from arreio.engine.core.paths import display_path
    from arreio.memory.entries import blocked_handle
    from arreio.memory.scan import scan_text

    stores = _stores()
    targets = [target.value] if target else ["memory", "user"]
    states = [stores.get(name).read() for name in targets]
    if as_json:
        payload = [
            {
                "target": state.target,
                "path": display_path(state.path),
                "chars": state.chars,
                "limit": state.limit,
                "drifted": state.drifted,
                "entries": state.entries,
            }
            for state in states
        ]
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    for number, state in enumerate(states):
        if number:
            typer.echo("")
        drift = " (edited by hand: does not round-trip)" if state.drifted else ""
        typer.echo(f"{state.path.name} ({display_path(state.path)}): {state.summary()}{drift}")
        for index, entry in enumerate(state.entries, 1):
            lines = entry.split("\n")
            finding = scan_text(entry)
            if finding is not None:  # the model never sees it; the human should clean it
                typer.echo(
                    f"  {index}. [BLOCKED: {finding.describe()}; remove with "
                    f"`arreio memory remove --target {state.target} {blocked_handle(entry)}`]"
                )
            first = inert(lines[0])  # stored text is shown, never acted on by the terminal
            typer.echo(f"  {index}. {first}" if finding is None else f"     {first}")
            for line in lines[1:]:
                typer.echo(f"     {inert(line)}")


@app.command("add")
def add(
    content: Annotated[str, typer.Argument(help="The entry to add.")], target: TargetOption = TargetName.memory
) -> None:
    """Add an entry (refused when unsafe, empty, or past the size limit)."""
    from arreio.cli.arguments import text
    from arreio.memory.entries import Operation

    _write(Operation("add", content=text(content, "the entry")), target)


@app.command("replace")
def replace(
    old_text: Annotated[str, typer.Argument(help="A short substring of exactly one entry.")],
    content: Annotated[str, typer.Argument(help="The new text of the whole entry.")],
    target: TargetOption = TargetName.memory,
) -> None:
    """Overwrite the one entry containing OLD_TEXT with CONTENT."""
    from arreio.cli.arguments import text
    from arreio.memory.entries import Operation

    _write(Operation("replace", content=text(content, "the new entry"), old_text=text(old_text, "OLD_TEXT")), target)


@app.command("remove")
def remove(
    old_text: Annotated[str, typer.Argument(help="A short substring of exactly one entry.")],
    target: TargetOption = TargetName.memory,
) -> None:
    """Remove the one entry containing OLD_TEXT."""
    from arreio.cli.arguments import text
    from arreio.memory.entries import Operation

    _write(Operation("remove", old_text=text(old_text, "OLD_TEXT")), target)


def _substores() -> Any:
    from arreio.engine.core.paths import state_dir
    from arreio.memory.substores import Substores

    return Substores(state_dir(), redactor=None, logged=False)  # reading only; _print_diagnostics says them


def _print_diagnostics(substores: Any) -> None:
    for message in substores.diagnostics:
        print(f"arreio: warning: {message}", file=sys.stderr)


def _substore_app(name: str) -> typer.Typer:
    sub = typer.Typer(help=f"The {name} substore (.arreio/memory/{name}.jsonl).", no_args_is_help=True)

    @sub.command("list")
    def list_records(
        limit: Annotated[int | None, typer.Option("--limit", "-n", help="Show at most N records.")] = None,
        agent: Annotated[str | None, typer.Option("--agent", help="Only records written by this agent.")] = None,
        since: Annotated[
            str | None, typer.Option("--since", help="Only records at or after this ISO-8601 time.")
        ] = None,
        as_json: JsonOption = False,
        long: Annotated[
            bool, typer.Option("--long", "-l", help="Add each record's kind, subject and verdict.")
        ] = False,
    ) -> None:
        """List records, newest first (`--long`: what each one says: kind · subject · verdict)."""
        from arreio.cli.inert import inert
        from arreio.engine.core.paths import display_path

        substores = _substores()
        records, total = substores.list(name, limit=limit, agent=agent, since=since)
        _print_diagnostics(substores)
        path = display_path(substores.path(name))
        if as_json:
            payload = {
                "substore": name,
                "path": path,
                "total": total,
                "records": [record.model_dump() for record in records],
            }
            typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
            return
        # The spec's exact line, which scripts parse: "N record(s)" whatever N is.
        typer.echo(f"memory {name}: {total} record(s) under {path}")
        for record in records:
            line = f"  {record.id} [agent {record.agent}] at {record.at}"  # scripts parse this: keep it as is
            if long:
                facts = [str(record.payload[k]) for k in ("kind", "subject", "verdict") if record.payload.get(k)]
                line += f"  {inert(' · '.join(facts))}" if facts else ""
            typer.echo(line)

    @sub.command("show")
    def show_record(
        record_id: Annotated[
            str, typer.Argument(metavar="ID", help="The record id (from `list`) or a unique prefix of it.")
        ],
        as_json: JsonOption = False,
    ) -> None:
        """Print one record."""
        from arreio.engine.core.errors import UsageError

        substores = _substores()
        record = substores.get(name, record_id)
        _print_diagnostics(substores)
        if record is None:
            raise UsageError(f"no record {record_id!r} in the {name} substore; see `arreio memory {name} list`.")
        if as_json:
            typer.echo(json.dumps(record.model_dump(), ensure_ascii=False, indent=2))
            return
        typer.echo(f"{record.id} [agent {record.agent}] at {record.at}")
        typer.echo(json.dumps(record.payload, ensure_ascii=False, indent=2))

    return sub


for _name in SUBSTORE_NAMES:
    app.add_typer(_substore_app(_name), name=_name)

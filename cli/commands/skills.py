"""`arreio skills`: list, show, pin/unpin, restore from the archive, adopt a user skill.

Only typer/rich/stdlib at import time; the curator package is imported inside each command.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from pathlib import Path

    from arreio.curator.library import SkillLibrary

app = typer.Typer(
    help="Procedures the agent keeps for itself: list, inspect, pin, restore and adopt skills.", no_args_is_help=True
)


class StateFilter(str, Enum):
    active = "active"
    stale = "stale"
    archived = "archived"
    all = "all"


def _library() -> SkillLibrary:
    from arreio.curator.library import SkillLibrary
    from arreio.curator.skills import skills_root
    from arreio.engine.core.paths import state_dir
    from arreio.engine.core.ports import SystemClock

    return SkillLibrary(skills_root(state_dir()), SystemClock())


@app.command("list")
def list_skills(
    state: Annotated[
        StateFilter, typer.Option("--state", help="Which skills to show: active, stale, archived or all.")
    ] = StateFilter.all,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List skills with their lifecycle state and usage."""
    entries, diagnostics = _library().entries()
    if state is not StateFilter.all:
        entries = [entry for entry in entries if entry.state == state.value]
    if as_json:
        payload = {
            "skills": [entry.to_json() for entry in entries],
            "diagnostics": [{"path": str(d.path), "code": d.code, "message": d.message} for d in diagnostics],
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    from rich.table import Table

    from arreio.cli.inert import shown as escape  # the agent writes skills: markup-safe and inert
    from arreio.cli.render import console_for

    console = console_for()  # a pipe gets whole lines (`arreio skills list | grep …`), not 80 columns
    if not entries:
        console.print("No skills." if state is StateFilter.all else f"No {state.value} skills.")
    else:
        table = Table(box=None, pad_edge=False)
        for column in ("name", "state", "by", "pinned", "uses", "views", "patches", "last activity", "description"):
            table.add_column(column, overflow="fold")
        for entry in entries:
            row = entry.to_json()
            table.add_row(
                escape(entry.entry),
                entry.state,
                escape(str(row["created_by"] or "?")),
                "yes" if row["pinned"] else "",
                str(row["use_count"]),
                str(row["view_count"]),
                str(row["patch_count"]),
                (row["last_activity"] or "")[:10],
                escape(row["description"] or "(invalid SKILL.md)"),
            )
        console.print(table)
    for diagnostic in diagnostics:
        typer.echo(f"arreio: warning: {diagnostic.line()}", err=True)


@app.command("show")
def show(name: Annotated[str, typer.Argument(help="Skill name (or archive entry).")]) -> None:
    """Print a skill's SKILL.md, its support files and its usage record."""
    from arreio.cli.inert import inert  # the agent writes skills: shown, never acted on by the terminal

    entry = _library().get(name)
    row = entry.to_json()
    typer.echo(inert(f"# {entry.entry}  [{entry.state}]  {entry.folder}"))
    typer.echo(
        inert(
            f"# by {row['created_by'] or '?'} · uses {row['use_count']} · views {row['view_count']} · "
            f"patches {row['patch_count']} · pinned {'yes' if row['pinned'] else 'no'} · "
            f"last activity {row['last_activity'] or 'never recorded'}"
        )
    )
    typer.echo(_skill_text(entry.folder / "SKILL.md"))
    if entry.skill is not None and entry.skill.support_files():
        typer.echo("Support files:")
        for file in entry.skill.support_files():
            typer.echo(f"  {inert(str(file))}")


def _skill_text(path: Path) -> str:
    """The SKILL.md as shown, or why it is not (the skill is listed either way)."""
    from arreio.cli.inert import inert
    from arreio.engine.core.regular_file import Limit, read_text

    if not path.exists():
        return "(no SKILL.md)"
    try:
        return inert(read_text(path, limit=Limit.SKILL, errors="replace"))
    except OSError as error:
        return f"(SKILL.md cannot be read: {error.strerror or error})"


@app.command("pin")
def pin(name: Annotated[str, typer.Argument(help="Skill name.")]) -> None:
    """Pin a skill: the curator never marks it stale or archives it."""
    _library().set_pinned(name, True)
    typer.echo(f"pinned {name}")


@app.command("unpin")
def unpin(name: Annotated[str, typer.Argument(help="Skill name.")]) -> None:
    """Unpin a skill: the lifecycle applies to it again."""
    _library().set_pinned(name, False)
    typer.echo(f"unpinned {name}")


@app.command("restore")
def restore(
    name: Annotated[str, typer.Argument(help="Archive entry (as `skills list` shows it) or skill name.")],
) -> None:
    """Move an archived skill back into use. Refused if a skill of that name already exists."""
    restored, destination = _library().restore(name)
    typer.echo(f"restored {restored} to {destination}")


@app.command("adopt")
def adopt(name: Annotated[str, typer.Argument(help="Name of a user skill.")]) -> None:
    """Hand a user skill to the curator: mark it created_by: agent (the lifecycle may then archive it)."""
    if _library().adopt(name):
        typer.echo(f"adopted {name}: it is now agent-managed (adopted_from: user)")
    else:
        typer.echo(f"{name} is already agent-managed")

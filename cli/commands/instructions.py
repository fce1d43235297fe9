"""`arreio instructions`: the project instruction files (AGENTS.md, CLAUDE.md) a new session reads, and
accepting a new or changed one (memory/instructions.py: a file is obeyed only as the user accepted it,
because the agent can write it).

Only typer and the standard library at import time; the library is imported by each command.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from arreio.engine.core.ports import process_env
from arreio.engine.core.wording import counted

app = typer.Typer(
    help="Project instructions (AGENTS.md, CLAUDE.md): see what a run obeys, accept a new or changed file.",
    no_args_is_help=True,
)
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _here() -> tuple[Any, Any, Any]:
    from pathlib import Path

    from arreio.engine.core.config import load_settings
    from arreio.engine.core.paths import state_dir
    from arreio.memory.instructions import instructions_settings

    cwd, env = Path.cwd().resolve(), process_env()
    return cwd, state_dir(cwd, env), instructions_settings(load_settings(cwd, env))


@app.command("show")
def show(
    text: Annotated[bool, typer.Option("--text", help="Print each file's text as well.")] = False,
    json_output: JsonOption = False,
) -> None:
    """List the instruction files a new session here reads (repository root first), whether each is
    obeyed, and for a changed one what changed since it was accepted."""
    from arreio.memory.instructions import changes, survey

    cwd, state, settings = _here()
    files = survey(cwd, state, settings)
    if json_output:
        print(
            json.dumps(
                {
                    "enabled": settings.enabled,
                    "files": [
                        {
                            "path": f.shown,
                            "state": f.state,
                            "obeyed": f.obeyed,
                            "digest": f.digest,
                            **({"text": f.text} if text else {}),
                        }
                        for f in files
                    ],
                },
                indent=2,
            )
        )
        return
    if not settings.enabled:
        print("instructions are off here (instructions.enabled: false)")
        return
    if not files:
        print(f"no instruction file here ({' or '.join(settings.names)}, from the repository root down)")
        return
    for f in files:
        mark = {"accepted": "obeyed ", "new": "new    ", "changed": "changed"}[f.state]
        print(f"{mark}  {f.shown}  ({counted(len(f.text.splitlines()), 'line')})")
        diff = changes(f, state)
        if diff:
            print("".join(f"    {line}" for line in diff.splitlines(keepends=True)).rstrip("\n"))
        if text:
            print("".join(f"    {line}" for line in f.text.splitlines(keepends=True)).rstrip("\n"))
    if any(not f.obeyed for f in files):
        print("review them, then `arreio instructions accept` (a run leaves them out until then)")


@app.command("accept")
def accept(
    files: Annotated[
        list[str] | None, typer.Argument(help="Files to accept, as `show` names them (default: all that wait).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Accept a file the security scan objects to.")] = False,
) -> None:
    """Accept the new or changed instruction files as they are now: their text passes the security
    scan, and a run obeys them until they change again."""
    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.ids import iso_ms
    from arreio.engine.core.ports import SystemClock
    from arreio.memory.instructions import accept as record
    from arreio.memory.instructions import survey
    from arreio.memory.scan import scan_text

    cwd, state, settings = _here()
    found = survey(cwd, state, settings)
    names = {f.shown: f for f in found}
    for name in files or []:
        if name not in names:
            known = ", ".join(names) or "none"
            raise UsageError(f"{name} is not an instruction file read here (these are: {known})")
    chosen = [names[n] for n in files] if files else [f for f in found if not f.obeyed]
    waiting = [f for f in chosen if not f.obeyed]
    if not waiting:
        print(
            "nothing to accept: "
            + (", ".join(f"{f.shown} is obeyed as it is" for f in chosen) or "no instruction file here")
        )
        return
    refused = False
    kept = []
    for f in waiting:
        finding = scan_text(f.text)
        if finding is not None and not force:
            print(
                f"refused {f.shown}: the security scan found {finding.describe()}; edit it, or accept it "
                "anyway with --force"
            )
            refused = True
            continue
        kept.append(f)
    if kept:
        record(kept, state, iso_ms(SystemClock().now()))
    for f in kept:
        print(
            f"accepted {f.shown} ({counted(len(f.text.splitlines()), 'line')}, {f.digest[:19]}…): new sessions obey it"
        )
    raise typer.Exit(1 if refused else 0)

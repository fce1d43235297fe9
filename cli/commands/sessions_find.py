"""`arreio sessions export` (Markdown, HTML, JSON) and `arreio sessions search` (full text, FTS5)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

FORMATS = ("md", "html", "json")
ROLES = ("user", "assistant", "tool")


def export(
    session_id: Annotated[str, typer.Argument(help="Session id or a unique prefix.")],
    format_: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="md (a readable transcript), html (one self-contained page) or json (for tools)."
        ),
    ] = "md",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
) -> None:
    """Export a session to read or share: Markdown, a self-contained HTML page, or JSON. Each tool call
    is shown with its result under it, thinking is folded, secrets stay as redacted when stored."""
    from arreio.cli.commands.sessions import _store
    from arreio.engine.core.errors import UsageError
    from arreio.engine.session.file import Session

    if format_ not in FORMATS:
        raise UsageError(f"--format {format_}: choose one of {', '.join(FORMATS)}")
    if output is not None and output.is_dir():
        raise UsageError(f"--output {output} is a folder; give a file name")
    if output is not None and not output.absolute().parent.is_dir():
        raise UsageError(f"--output {output}: the folder {output.parent} does not exist")
    store = _store()
    session, repairs = Session.open(store.path_for(store.resolve(session_id)), repair=False)  # read-only
    if format_ == "json":
        from arreio.engine.session.transcript import to_json

        text = to_json(session.header, session.messages, session.runs, repairs)
    elif format_ == "html":
        from arreio.engine.session.transcript_html import to_html

        text = to_html(session.header, session.messages, session.runs)
    else:
        from arreio.engine.session.transcript import to_markdown

        text = to_markdown(session.header, session.messages, session.runs)
    if output is not None:
        from arreio.engine.core.atomic import write_atomic

        write_atomic(output, text.encode("utf-8", "surrogateescape"), durable=False)
        print(f"wrote {output} ({format_}, {len(session.messages)} messages)", file=sys.stderr)
        return
    if sys.stdout.isatty():  # what a model or a tool wrote must not drive the terminal
        from arreio.cli.inert import inert

        text = inert(text)
    sys.stdout.write(text)


def search(
    text: Annotated[
        str,
        typer.Argument(
            help="Words to find (every one must be on the line; any script, Japanese and Chinese included)."
        ),
    ],
    here: Annotated[bool, typer.Option("--here", help="Only sessions started in this directory.")] = False,
    role: Annotated[
        str | None, typer.Option("--role", help="Only lines of user, assistant or tool (calls and results).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many lines.")] = 50,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON instead of lines.")] = False,
) -> None:
    """Search past sessions' text, newest first: each matching line with its session id and time.
    The index (.arreio/search.sqlite) is brought up to date first, and rebuilt when it is missing."""
    import json

    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.paths import state_dir
    from arreio.engine.session.search import SessionIndex, excerpt

    if role is not None and role not in ROLES:
        raise UsageError(f"--role {role}: choose one of {', '.join(ROLES)}")
    if not text.strip():
        raise UsageError("nothing to search for: give a word or two")
    state = state_dir()
    sessions = state / "sessions"
    if not sessions.is_dir():  # no state folder is made just to search it
        hits = []
    else:
        try:
            index = SessionIndex(state / "search.sqlite", sessions)
        except RuntimeError as error:
            from arreio.engine.core.errors import ConfigError

            raise ConfigError(str(error)) from None
        try:
            hits = index.search(text, cwd=Path.cwd() if here else None, role=role, limit=limit)
        finally:
            index.close()
    if json_output:
        print(
            json.dumps(
                [
                    {
                        "session_id": h.session_id,
                        "at": h.at,
                        "role": h.role,
                        "line": h.line,
                        "title": h.title,
                        "cwd": h.cwd,
                    }
                    for h in hits
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    from arreio.cli.inert import inert

    if not hits:
        print(f"no line matches {text!r}" + (" in sessions started here" if here else ""))
        return
    for h in hits:
        when = h.at[:16].replace("T", " ")
        line = excerpt(h.line.replace("\t", " "), text)  # a numbered file line: its tab is a space here
        print(inert(f"{h.session_id}  {when}  {h.role:<9}  {line}", one_line=True))


def register(app: typer.Typer) -> None:
    app.command("export")(export)
    app.command("search")(search)

"""`arreio curator`: run the skill lifecycle (never deletes) and show its status.

Only typer/stdlib at import time; the curator and the memory substores are imported inside commands.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arreio.engine.core.ports import process_env

if TYPE_CHECKING:
    from arreio.curator.curator import Curator, CuratorReport
    from arreio.engine.core.ports import Clock

app = typer.Typer(help="Keep the skill library tidy: stale, archive, reactivate — never delete.", no_args_is_help=True)

NowOption = Annotated[
    str | None, typer.Option("--now", help="Pretend the time is this ISO-8601 instant (e.g. 2026-07-01T09:00:00Z).")
]
StaleOption = Annotated[
    float | None, typer.Option("--stale-days", help="Days without activity before a skill is stale (default 30).")
]
ArchiveOption = Annotated[
    float | None, typer.Option("--archive-days", help="Days without activity before it is archived (default 90).")
]


def parse_now(value: str) -> datetime:
    """`--now` text to an aware UTC datetime; a naive time is taken as UTC."""
    from arreio.engine.core.ids import parse_utc

    return parse_utc(value, what="--now")


def substore_recorder(state_dir: Path, clock: Clock) -> Callable[[dict[str, Any]], None]:
    """`on_record` for the curator: append the run to the `procedural` substore."""

    def record(payload: dict[str, Any]) -> None:
        from arreio.engine.walls.redact import Redactor
        from arreio.memory.substores import Substores

        Substores(state_dir, clock, redactor=Redactor.from_env(process_env())).append("procedural", "curator", payload)

    return record


def build_curator(
    now: str | None,
    stale_days: float | None,
    archive_days: float | None,
    *,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    on_audit: Callable[[dict[str, Any]], None] | None = None,
) -> Curator:
    """Wire a curator over `<state>/skills`. `on_record` defaults to the procedural substore."""
    from arreio.curator.curator import Curator
    from arreio.curator.lifecycle import Policy
    from arreio.curator.skills import skills_root
    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.paths import state_dir
    from arreio.engine.core.ports import SystemClock
    from arreio.engine.providers.testing import FixedClock  # `--now` freezes time for the whole run

    clock: Clock = FixedClock(parse_now(now)) if now else SystemClock()
    from arreio.engine.core.config import load_settings

    configured = load_settings().curator.model_dump()  # config.yaml `curator:`; flags win
    try:
        policy = Policy.from_mapping(
            configured
            | {k: v for k, v in {"stale_days": stale_days, "archive_days": archive_days}.items() if v is not None}
        )
    except ValueError as error:
        raise UsageError(str(error)) from None
    root = state_dir()
    return Curator(
        skills_root(root),
        clock,
        policy,
        on_record=on_record if on_record is not None else substore_recorder(root, clock),
        on_audit=on_audit if on_audit is not None else audit_recorder(root, clock),
    )


def audit_recorder(state_dir: Path, clock: Clock) -> Callable[[dict[str, Any]], None]:
    """`on_audit` for the curator: one `curator` entry in the hash-chained audit journal."""

    def record(payload: dict[str, Any]) -> None:
        from arreio.engine.walls.audit import AuditJournal
        from arreio.engine.walls.redact import Redactor

        AuditJournal(state_dir, clock, redactor=Redactor.from_env(process_env())).append("curator", payload)

    return record


def render_report(report: CuratorReport, title: str | None = None) -> None:
    counts = report.counts()
    title = title or ("curator dry run, nothing changed:" if report.dry_run else "curator done:")
    typer.echo(
        f"{title} checked {counts['checked']}, marked stale {counts['marked_stale']}, "
        f"archived {counts['archived']}, reactivated {counts['reactivated']}, seeded {counts['seeded']}"
    )
    if report.first_run:
        typer.echo("first run in this store: records are seeded, nothing else changes until the next run")
    for change in report.changes:
        row = change.to_json(report.skills_dir)
        moved = f"; moved to {row['archived_to']}" if "archived_to" in row else ""
        typer.echo(f"  {row['kind']:<10} {row['name']}: {row['from'] or 'new'} → {row['to']}; {row['reason']}{moved}")
    for diagnostic in report.diagnostics:
        typer.echo(f"arreio: warning: skipped invalid skill: {diagnostic.line()}", err=True)


@app.command("run")
def run(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would change; change nothing.")] = False,
    now: NowOption = None,
    stale_days: StaleOption = None,
    archive_days: ArchiveOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run as JSON.")] = False,
) -> None:
    """Apply the lifecycle once: seed new skills, mark idle ones stale, archive long-idle ones."""
    curator = build_curator(now, stale_days, archive_days)
    if not dry_run:
        from arreio.engine.core.paths import make_state_dir, state_dir

        make_state_dir(state_dir())  # a folder made here keeps itself out of git (paths.STATE_GITIGNORE)
    report = curator.run(dry_run=dry_run)
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        render_report(report)


@app.command("status")
def status(
    now: NowOption = None,
    stale_days: StaleOption = None,
    archive_days: ArchiveOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Show the last run and what a run now would do."""
    result = build_curator(now, stale_days, archive_days).status()
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2))
        return
    if result.last_run_at is None:
        typer.echo("last run: never (the next run only seeds records)")
    else:
        counts = (result.last_run or {}).get("counts", {})
        summary = ", ".join(f"{key.replace('_', ' ')} {value}" for key, value in counts.items())
        typer.echo(f"last run: {result.last_run_at.isoformat()} ({summary})")
    render_report(result.next_run, title=f"a run now ({result.next_run.at.isoformat()}) would see:")

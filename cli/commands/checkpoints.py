"""`arreio diff`, `arreio undo` and `arreio checkpoints list|prune`: what a run changed in the working
tree, taking it back, and the checkpoints kept for that (engine/governance/checkpoints/)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from arreio.cli.durations import duration, spelled

app = typer.Typer(help="Working-tree checkpoints kept for `arreio diff` and `arreio undo`.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]
RunOpt = Annotated[
    str | None,
    typer.Option("--run", help="A run id or unique prefix (default: the last run here).", show_default=False),
]

DIFF_HELP = (
    "Show what a run changed in this folder — files created, modified, deleted — as a unified diff "
    "(default: the last run here)."
)
UNDO_HELP = (
    "Take this folder back to before a run (default: the last run here) or to a checkpoint.\n\n"
    "Byte for byte: modified files return, deleted ones come back, created ones go. A file changed since the run is a "
    "conflict, overwritten only with --force. The undo is checkpointed too: `arreio undo --run <undo id>` "
    "takes it back.\n\nExit codes: 0 done (or nothing to do) · 1 conflicts or a file that could not be "
    "restored · 2 bad input, or --yes needed."
)
_KIND_ORDER = ("restore", "bring back", "remove")
_ASIDE = "what is there now was never checkpointed: it is moved aside, into the state folder"


def _where():
    from pathlib import Path

    from arreio.engine.checkpoints.history import open_store
    from arreio.engine.checkpoints.settings import checkpoint_settings
    from arreio.engine.core.config import load_settings
    from arreio.engine.core.paths import state_dir
    from arreio.engine.core.ports import process_env
    from arreio.engine.core.programs import agent_writable
    from arreio.engine.tools.sandbox import sandbox_settings

    cwd, env = Path.cwd().resolve(), process_env()
    loaded = load_settings(cwd, env)
    settings = checkpoint_settings(loaded)
    untrusted = agent_writable(cwd, env, sandbox_settings(loaded).writable_roots)
    from arreio.engine.walls.redact import Redactor

    repo, index = open_store(
        state_dir(cwd, env), cwd, env, settings.max_file_bytes, untrusted, redactor=Redactor.from_env(env)
    )
    return repo, index, settings


def _dump(value) -> None:
    import json

    text = json.dumps(value, ensure_ascii=False, indent=2)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a file name that is not UTF-8: \udcxx escapes keep it exact
        text = json.dumps(value, indent=2)
    print(text)


def _changes_line(changes: dict | None) -> str:
    if not changes:
        return "-"
    return f"+{len(changes.get('created', []))} ~{len(changes.get('modified', []))} -{len(changes.get('deleted', []))}"


# -- diff ---------------------------------------------------------------------------------------------
def diff(
    run: RunOpt = None,
    step: Annotated[
        int | None, typer.Option("--step", min=0, help="Only the tool round after this model turn.", show_default=False)
    ] = None,
    stat: Annotated[bool, typer.Option("--stat", help="A summary per file instead of the full diff.")] = False,
    json_output: JsonFlag = False,
) -> None:
    from arreio.engine.checkpoints.history import diff_run
    from arreio.engine.checkpoints.plan import shown
    from arreio.engine.core.wording import counted

    repo, index, _ = _where()
    result = diff_run(repo, index, run, step, stat_only=stat)
    if json_output:
        status = {p: s for s, paths in result.changes.items() for p in paths}
        files = [
            {
                "path": p,
                "status": status[p],
                "added": result.stat.get(p, (None, None))[0],
                "removed": result.stat.get(p, (None, None))[1],
            }
            for p in sorted(status)
        ]
        body = {
            "run_id": result.run_id,
            "step": step,
            "before": result.before,
            "after": result.after or None,
            **result.changes,
            "files": files,
            "notes": result.notes,
            "skipped": result.skipped,
            "skipped_why": result.skipped_why,
        }
        if not stat:
            body["patch"] = result.patch
        _dump(body)
        return
    c = result.changes
    what = f"run {result.run_id}" + (f" step {step}" if step is not None else "")
    total = sum(len(v) for v in c.values())
    print(
        f"{what}: {counted(total, 'file')} changed — {len(c['created'])} created, {len(c['modified'])} modified, "
        f"{len(c['deleted'])} deleted (from checkpoint {result.before})"
    )
    for note in result.notes:
        print(f"note: {note}")
    for why, paths in _by_reason(result.skipped, result.skipped_why).items():
        print(f"not checkpointed ({why}): {', '.join(map(shown, paths))}")
    if not total:
        return
    if not stat:
        for kind in ("created", "modified", "deleted"):
            for path in c[kind]:
                print(f"  {kind:<9} {shown(path)}")
        print()
    patch = result.patch
    if sys.stdout.isatty():  # the agent wrote these bytes: a terminal gets them inert; a pipe gets the patch
        from arreio.cli.inert import inert

        patch = inert(patch)
    print(patch, end="" if patch.endswith("\n") else "\n")


# -- undo ---------------------------------------------------------------------------------------------
def _show_plan(prepared, *, force: bool = False) -> None:
    from arreio.engine.checkpoints.plan import shown

    plan = prepared.plan
    print(f"undo {prepared.undoing} (back to checkpoint {prepared.target_id}):")
    for note in prepared.notes:
        print(f"  note: {note}")
    for action in sorted(plan.actions, key=lambda a: (_KIND_ORDER.index(a.kind), a.path)):
        print(f"  {action.kind:<10}  {shown(action.path)}" + (f"  ({_ASIDE})" if action.aside else ""))
    if plan.conflicts:
        print(
            "conflicts — changed since, overwritten too (--force):"
            if force
            else "conflicts — changed since, so not overwritten without --force:"
        )
        for action in plan.conflicts:
            print(f"  {action.kind:<10}  {shown(action.path)}  ({action.why}{'; ' + _ASIDE if action.aside else ''})")
    if plan.already:
        print(f"already as before: {', '.join(map(shown, plan.already))}")
    if plan.skipped:
        print(f"not checkpointed, left as they are: {', '.join(map(shown, plan.skipped))}")


def _plan_json(prepared) -> dict:
    plan = prepared.plan
    return {
        "undoing": prepared.undid,
        "target": prepared.target_id,
        "notes": prepared.notes,
        "actions": [{"path": a.path, "op": a.op, "kind": a.kind, "aside": a.aside} for a in plan.actions],
        "conflicts": [
            {"path": a.path, "op": a.op, "kind": a.kind, "why": a.why, "aside": a.aside} for a in plan.conflicts
        ],
        "already": plan.already,
        "skipped": plan.skipped,
    }


def undo(
    run: RunOpt = None,
    to: Annotated[
        str | None,
        typer.Option("--to", help="A checkpoint id (ck-…, see `arreio checkpoints list`).", show_default=False),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan, change nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Apply without asking.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files changed since the run (conflicts) too.")
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    from arreio.engine.checkpoints.plan import shown
    from arreio.engine.checkpoints.restore import apply_undo, prepare_undo
    from arreio.engine.core.errors import ArreioError, UsageError
    from arreio.engine.core.ports import SystemClock, process_env
    from arreio.engine.core.wording import counted
    from arreio.engine.walls.audit import AuditJournal
    from arreio.engine.walls.redact import Redactor

    if run is not None and to is not None:
        raise UsageError("give --run or --to, not both")
    repo, index, _ = _where()
    prepared = prepare_undo(repo, index, run_id=run, to=to)
    plan = prepared.plan
    show = (
        (lambda: _dump({"plan": _plan_json(prepared)})) if json_output else (lambda: _show_plan(prepared, force=force))
    )
    if plan.empty:
        if json_output:
            _dump({"plan": _plan_json(prepared), "result": None})
        elif plan.skipped:  # it changed files, but none a checkpoint holds: "already as before" was untrue
            print(
                f"nothing undo can restore: what {prepared.undoing} changed was not checkpointed, so it is "
                f"left as it is: {', '.join(map(shown, plan.skipped))}"
            )
        else:
            print(f"nothing to undo: the files {prepared.undoing} changed are already as before")
        return
    if not json_output or dry_run or (plan.conflicts and not force) or not yes:
        show()  # what will change is always said first, --yes or not
    if dry_run:
        return
    if plan.conflicts and not force:
        names = ", ".join(shown(a.path) for a in plan.conflicts)
        raise ArreioError(
            f"{counted(len(plan.conflicts), 'file')} changed since {prepared.undoing} ({names}); "
            "nothing was changed — re-run with --force to overwrite them too"
        )
    if not yes:
        if not (sys.stdin.isatty() and sys.stdout.isatty()) or json_output:
            raise UsageError(
                "undo changes files and nobody can confirm here: re-run with --yes to apply the plan "
                "above (or --dry-run to only show it)"
            )
        if not typer.confirm("apply this undo?", default=False):
            print("undo cancelled: nothing was changed")
            raise typer.Exit(1)
    clock = SystemClock()
    journal = AuditJournal(repo.state_dir, clock, redactor=Redactor.from_env(process_env()))
    result = apply_undo(prepared, force=force, clock=clock, journal=journal)
    if json_output:
        _dump(
            {
                "plan": _plan_json(prepared),
                "result": {
                    "undo_id": result.undo_id,
                    "before": result.before,
                    "after": result.after,
                    "done": result.done,
                    "forced": result.forced,
                    "failed": result.failed,
                    "warnings": result.warnings,
                    "moved": result.moved,
                },
            }
        )
    else:
        print(
            f"undone {prepared.undoing}: {counted(len(result.done), 'file')} put back as at checkpoint "
            f"{prepared.target_id}" + (f" ({len(result.forced)} forced)" if result.forced else "")
        )
        for path, where in result.moved.items():
            print(f"moved aside: {shown(path)} (as the run left it) is now {shown(where)}")
        print(f"recorded as {result.undo_id}; take it back with `arreio undo --run {result.undo_id}`")
    for warning in result.warnings:
        print(f"arreio: warning: {warning}", file=sys.stderr)
    if result.failed:
        raise ArreioError(
            f"{counted(len(result.failed), 'file')} could not be restored: {', '.join(map(shown, result.failed))}"
        )


# -- checkpoints list | prune ---------------------------------------------------------------------------
@app.command("list")
def list_checkpoints(
    session: Annotated[
        str | None, typer.Option("--session", help="Only this session's runs (id or prefix).", show_default=False)
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """List the runs (and undos) that checkpointed this folder, oldest first, with their checkpoints."""
    repo, index, _ = _where()
    runs = [r for r in index.runs(str(repo.worktree)) if not session or r.session_id.startswith(session)]
    if json_output:
        _dump(
            [
                {
                    "id": r.run_id,
                    "source": r.source,
                    "session_id": r.session_id or None,
                    "at": r.at,
                    "finished": r.closed,
                    "before": r.first["id"],
                    "after": r.last["id"],
                    "changes": (r.end or {}).get("changes"),
                    "undid": (r.end or {}).get("undid"),
                    "checkpoints": [
                        {
                            "id": c["id"],
                            "step": c.get("step"),
                            "phase": c.get("phase"),
                            "at": c.get("at"),
                            "calls": c.get("calls", []),
                            "changes": c.get("changes"),
                        }
                        for c in r.checkpoints
                    ],
                }
                for r in runs
            ]
        )
        return
    if not runs:
        print("no checkpoints in this folder yet" + (f" for session {session}" if session else ""))
        return
    print(f"{'ID':<30} {'WHEN':<24} {'SESSION':<24} {'CHANGES':<12} BEFORE")
    for r in runs:
        what = _changes_line((r.end or {}).get("changes")) if r.closed else "unfinished"
        extra = f"  undid {r.end.get('undid')}" if r.end and r.end.get("undid") else ""
        print(f"{r.run_id:<30} {r.at:<24} {(r.session_id or '-'):<24} {what:<12} {r.first['id']}{extra}")


@app.command("prune")
def prune_checkpoints(
    older_than: Annotated[
        str | None,
        typer.Option(
            "--older-than",
            help="Remove runs older than this (30d, 12h, 90min; default: keep_days from config).",
            show_default=False,
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Remove without asking.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Remove old runs' checkpoints (each folder's newest run is kept), then the oldest while the store is
    over `checkpoints.max_total_mb`. Which runs go, and from what age, is said and asked first."""
    from datetime import timedelta

    from arreio.engine.checkpoints.history import prune, prune_by_age, run_ages
    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.ports import SystemClock
    from arreio.engine.core.wording import counted

    repo, index, settings = _where()
    keep = duration(older_than) if older_than else timedelta(days=settings.keep_days)
    now = SystemClock().now()
    going = prune_by_age(run_ages(index.runs()), now, keep) if index.path.exists() else []
    if going and not yes:
        # The checkpoints are what `arreio undo` needs: a unit misread removes them for good.
        print(
            f"{counted(len(going), 'run')} older than {spelled(keep)} would lose their checkpoints "
            f"(undo can no longer take them back): {', '.join(going)}",
            file=sys.stderr,
        )
        if not (sys.stdin.isatty() and sys.stderr.isatty()) or json_output:
            raise UsageError("prune removes checkpoints and nobody can confirm here: re-run with --yes")
        if not typer.confirm("remove them?", default=False, err=True):
            print("prune cancelled: nothing was removed", file=sys.stderr)
            raise typer.Exit(1)
    if not index.path.exists():
        result = None
    else:
        result = prune(repo, index, now=now, keep=keep, max_bytes=settings.max_total_bytes)
    removed = result.removed if result else []
    if json_output:
        _dump({"removed": removed, "size_bytes": result.size_after if result else 0})
        return
    print(
        f"pruned {counted(len(removed), 'run')}"
        + (f": {', '.join(removed)}" if removed else "")
        + (f" · store {result.size_after / 1048576:.1f} MB" if result and result.size_after else "")
    )


def _by_reason(paths: list[str], why: dict[str, str]) -> dict[str, list[str]]:
    """The files left out of checkpoints, grouped by why (a git-ignored output was said to be "too large
    or unreadable"); an old index that does not say keeps that wording."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        groups.setdefault(why.get(path) or "too large or unreadable", []).append(path)
    return groups

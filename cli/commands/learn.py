"""`arreio learn`: run the gated learning pass after the fact, on a finished session."""

from __future__ import annotations

from typing import Annotated

import typer

from arreio.engine.core.ports import process_env

HELP = "Run the learning pass on a finished session (proposer → validate → gate → apply to memory)."


def learn(
    session: Annotated[str, typer.Option("--session", "-s", help="Session id or a unique prefix.", show_default=False)],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the proposals and verdicts; apply nothing.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    from pathlib import Path

    from arreio.engine.core.paths import state_dir
    from arreio.engine.session.lock import SessionLock
    from arreio.engine.session.store import SessionStore

    cwd = Path.cwd()
    home = state_dir(cwd)
    store = SessionStore(home / "sessions")
    sid = store.resolve(session)
    # A session another process is running has no final state to learn from (and its run may still
    # learn on its own): refused, as a resume is. The lock is held for the whole pass.
    lock = SessionLock(store.path_for(sid)).acquire(sid)
    try:
        _learn(sid, store, home, cwd, dry_run=dry_run, json_output=json_output)
    finally:
        lock.release()


def _learn(sid: str, store, home, cwd, *, dry_run: bool, json_output: bool) -> None:
    import asyncio
    import json

    from arreio.cli.lessons import lesson_line
    from arreio.engine.core.config import load_settings
    from arreio.engine.core.events import event_from_json
    from arreio.engine.core.ports import SystemClock
    from arreio.engine.session.file import Session
    from arreio.engine.tools.run_context import RunContext
    from arreio.learning.stage import learn as learn_pass

    saved, _ = Session.open(store.path_for(sid), repair=False)
    saved.close()
    ended = [r for r in saved.runs if r.get("event") == "end"]
    if ended and ended[-1].get("verdict") != "success":
        from arreio.engine.core.errors import UsageError

        raise UsageError(
            f"session {sid}'s last run ended {ended[-1].get('verdict')}: the learning pass learns only from "
            "runs that succeeded (finish or resume it first)"
        )
    run_ids = [r.get("run_id") for r in ended]
    events = []
    if run_ids:
        path = home / "runs" / str(run_ids[-1]) / "events.jsonl"
        if path.exists():
            from arreio.engine.core.regular_file import Limit, read_text

            for line in read_text(path, limit=Limit.JOURNAL, errors="replace").splitlines():
                try:
                    events.append(event_from_json(line))
                except ValueError:
                    continue  # a torn last line of a killed run
    goal = next((m.text for m in saved.messages if m.role == "user"), saved.header.title)
    ctx = RunContext(
        cwd=cwd,
        state_dir=home,
        settings=load_settings(cwd),
        clock=SystemClock(),
        env=process_env(),
        session_id=sid,
        session_path=saved.path,
        run_id=str(run_ids[-1]) if run_ids else "",
    )
    outcome = asyncio.run(
        learn_pass(ctx, events=events, messages=saved.messages, goal=goal, model=saved.header.model, dry_run=dry_run)
    )
    if json_output:
        print(
            json.dumps(
                {
                    "session": sid,
                    "dry_run": dry_run,
                    "applied": outcome.applied,
                    "rejected": outcome.rejected,
                    "failed": outcome.failed,
                    "error": outcome.error,
                    "note": outcome.note,
                    "decisions": [
                        {
                            "bucket": d.bucket,
                            "reason": d.reason,
                            "proposal": d.proposal.model_dump() if d.proposal else None,
                            "raw": None if d.proposal else d.raw,
                        }
                        for d in outcome.decisions
                    ],
                },
                ensure_ascii=False,
                indent=2,
                default=str,
            )
        )
    else:
        if outcome.note and not outcome.decisions and not outcome.error:
            print(f"learning: {outcome.note}")
        for lesson in outcome.lessons():  # the model's words: inert (cli/lessons.py)
            print(f"  {lesson_line(lesson, dry_run=dry_run)}")
        print(outcome.line())
    raise typer.Exit(1 if outcome.error else 0)

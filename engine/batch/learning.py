"""`arreio batch --learn`: after the batch, the learning pass over validated wins only, once.

Only attempts whose run succeeded with every gate passed are learned from, and each task once (its
first such attempt: K repeats of one task teach nothing K times). The lessons go into the suite's
memory — the state folder the batch was started from — which every later attempt is seeded with.
Attempts learned from are listed in `learned.jsonl`, so a resumed batch never learns from one twice.
The pass is the same `LearningPass` the conveyor's own stage runs; it never fails the batch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arreio.engine.batch.results import BatchFolder
from arreio.engine.core.events import event_from_json
from arreio.engine.core.regular_file import Limit, read_text
from arreio.engine.run.learning import LearningPass, run_learning
from arreio.engine.session.file import Session
from arreio.engine.tools.run_context import RunContext


def _events(path: Path) -> list[Any]:
    events: list[Any] = []
    try:
        lines = read_text(path, limit=Limit.JOURNAL, errors="replace").splitlines()
    except OSError:
        return events
    for line in lines:
        try:
            events.append(event_from_json(line))
        except ValueError:
            continue
    return events


def _wins(folder: BatchFolder) -> list[dict[str, Any]]:
    """Each task's first attempt that passed, not learned from before."""
    learned = {task for task, _ in folder.learned()}
    picked: dict[str, dict[str, Any]] = {}
    for row in folder.rows():
        if row.get("passed") and row.get("session") and row["task"] not in learned:
            best = picked.get(row["task"])
            if best is None or int(row["attempt"]) < int(best["attempt"]):
                picked[row["task"]] = row
    return list(picked.values())


async def learn_from_batch(folder: BatchFolder, learning: LearningPass | None, *, ctx: RunContext) -> dict[str, Any]:
    """Run the pass over the batch's wins into `ctx.state_dir`; the totals (and any errors) come back."""
    totals: dict[str, Any] = {"attempts": 0, "applied": 0, "rejected": 0, "failed": 0, "errors": []}
    for row in _wins(folder):
        session_path = folder.path / row["session"]
        try:
            session, _ = Session.open(session_path, repair=False)
        except Exception as error:  # noqa: BLE001 - one unreadable session skips that win, not the pass
            totals["errors"].append(f"{row['task']}: session unreadable: {error}")
            continue
        session.close()
        events = _events(session_path.parent.parent / "runs" / str(row.get("run_id")) / "events.jsonl")
        goal = next((m.text for m in session.messages if m.role == "user"), session.header.title)
        run_ctx = RunContext(
            cwd=ctx.cwd,
            settings=ctx.settings,
            clock=ctx.clock,
            env=ctx.env,
            state_dir=ctx.state_dir,
            provider_factory=ctx.provider_factory,
            session_id=session.id,
            session_path=session_path,
            run_id=str(row.get("run_id") or ""),
        )
        async for event in run_learning(
            learning,
            run_ctx,
            events=events,
            messages=session.messages,
            goal=goal,
            model=str(row.get("model") or session.header.model),
            config={},
        ):
            if event.type == "learning_pass_done":
                totals["attempts"] += 1
                totals["applied"] += event.applied
                totals["rejected"] += event.rejected
                totals["failed"] += event.failed
                if event.error:
                    totals["errors"].append(f"{row['task']}: {event.error}")
            elif event.type == "warning" and "not wired" in event.message:
                totals["errors"].append(event.message)
        folder.mark_learned({"task": row["task"], "attempt": row["attempt"], "run_id": row.get("run_id")})
    if not totals["errors"]:
        del totals["errors"]
    return json.loads(json.dumps(totals))

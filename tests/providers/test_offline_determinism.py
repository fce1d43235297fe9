"""The offline model is deterministic: the same command on the same files gives the same answer run
after run, even when a large goal makes the runs compact (the calibration of its own estimated usage
swung between runs, so every other run compacted); and its tool-call ids stay unique in a session,
across compactions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from arreio.engine.providers.testing import FixedClock
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from arreio.engine.session.file import Session


def _ids(path: Path) -> list[str]:
    ids = []
    for archive in (
        sorted((path.parent / path.stem / "compacted").glob("*.jsonl")) if (path.parent / path.stem).exists() else []
    ):
        for line in archive.read_text().splitlines():
            record = json.loads(line)
            ids += [p["id"] for p in record.get("parts", []) if p.get("type") == "tool_call"]
    session, _ = Session.open(path)
    ids += [c.id for m in session.messages if m.role == "assistant" for c in m.tool_calls]
    return ids


def test_the_same_large_goal_gives_the_same_answer_every_time(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".arreio").mkdir(parents=True)
    (work / ".arreio" / "config.yaml").write_text("context:\n  window: 12000\n")
    (work / "NOTES.md").write_text("alpha beta\ngamma delta epsilon\nzeta\n")
    goal = "Read NOTES.md. " * 3000  # ~45 KB: the goal alone is past the watermark
    answers, compactions = [], []
    for _ in range(4):
        events = asyncio.run(
            run_to_end(
                RunOptions(
                    goal_text=goal,
                    cwd=work,
                    env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "h")},
                    model="offline",
                ),
                PipelineDeps(clock=FixedClock()),
            )
        )
        answers.append(events[-1].final_text)
        compactions.append(sum(e.type == "compaction" for e in events))
        ids = _ids(work / ".arreio" / "sessions" / f"{events[0].session_id}.jsonl")
        assert len(ids) == len(set(ids)), ids
    assert len(set(answers)) == 1 and len(set(compactions)) == 1, (answers, compactions)
    assert "3 lines" in answers[0]

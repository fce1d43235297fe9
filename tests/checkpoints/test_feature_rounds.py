"""The feature inside the conveyor: an approval answered at the terminal still gets its checkpoint (the
feature is asked before governance decides), a sub-agent's work is recorded against its parent's
`delegate` round, and a library caller's `PipelineDeps()` has checkpoints without asking."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from arreio.engine.checkpoints.index import CheckpointIndex
from arreio.engine.providers.testing import FixedClock, ScriptedProvider, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end


def _run(work: Path, provider: ScriptedProvider, **deps) -> tuple[list, dict]:
    options = RunOptions(
        goal_text="# Do the work\n",
        cwd=work,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(work.parent / "home")},
    )
    events = asyncio.run(
        run_to_end(options, PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(provider), **deps))
    )
    return events, json.loads((work / events[-1].report_path).read_text())


def test_a_call_approved_at_the_terminal_is_checkpointed(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "data.txt").write_text("precious\n")
    provider = ScriptedProvider(
        [
            {"text": "cleaning", "tool_calls": [{"name": "shell", "arguments": {"command": "rm data.txt"}}]},
            {"text": "done"},
        ]
    )
    asked = []
    events, report = _run(work, provider, ask_approval=lambda event: asked.append(event.name) or True)
    assert asked == ["shell"] and events[-1].verdict == "success"
    assert report["changes"] == {"created": [], "modified": [], "deleted": ["data.txt"]}
    rounds = [c for c in CheckpointIndex(work / ".arreio").checkpoints() if c["phase"] == "after"]
    assert [c["name"] for c in rounds[0]["calls"]] == ["shell"]


def test_a_sub_agents_writes_belong_to_the_parents_delegate_round(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    provider = ScriptedProvider(
        [{"tool_calls": [{"name": "delegate", "arguments": {"task": "Write note.txt"}}]}, {"text": "delegated"}],
        agents={
            "d1": [
                {"tool_calls": [{"name": "write_file", "arguments": {"path": "note.txt", "content": "hi\n"}}]},
                {"text": "wrote it"},
            ]
        },
    )
    events, _ = _run(work, provider)
    assert (work / "note.txt").read_text() == "hi\n" and events[-1].changes["created"] == ["note.txt"]
    points = CheckpointIndex(work / ".arreio").checkpoints()
    assert [(c["phase"], c["step"]) for c in points] == [("before", 1), ("after", 1)]
    assert points[1]["calls"] == [{"id": "call_0_0", "name": "delegate"}]
    assert points[1]["changes"]["created"] == ["note.txt"]

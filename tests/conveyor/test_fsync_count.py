"""`fsync: false` reaches every writer; with it on, a turn makes exactly two fsyncs.

A run through the real pipeline with every feature the CLI wires (`cli/deps.pipeline_deps()`): a
scripted model reads one file a turn. `os.fsync` is wrapped for the run (pytest's monkeypatch, the
real call still made) and counted: in the whole run with `fsync: false`, and between consecutive
`tool_end` events (one turn: the reply with its request record, then the tool's audit entry) with it on.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from pathlib import Path

import pytest

from arreio.cli.deps import pipeline_deps
from arreio.engine.run.pipeline import RunOptions, run_pipeline
from arreio.engine.session.file import Session

TURNS = 6


def _workspace(root: Path, fsync: bool) -> RunOptions:
    (root / "src").mkdir()
    replies = []
    for i in range(TURNS):
        (root / "src" / f"f{i}.txt").write_text(f"file {i}\n" * 200)
        replies.append(
            {"text": f"Reading {i}.", "tool_calls": [{"name": "read_file", "arguments": {"path": f"src/f{i}.txt"}}]}
        )
    replies.append({"text": "Done."})
    (root / "script.json").write_text(json.dumps({"replies": replies}))
    (root / "GOAL.md").write_text("# Read\n\nRead every file under src/.\n")
    (root / ".arreio").mkdir()
    (root / ".arreio" / "config.yaml").write_text(f"fsync: {'true' if fsync else 'false'}\n")
    return RunOptions(goal_path=root / "GOAL.md", script=root / "script.json", cwd=root, env={})


def _run(options: RunOptions, monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], int, str]:
    """(fsyncs counted at each tool_end, total fsyncs, verdict)."""
    real, count = os.fsync, [0]

    def counting(fd: int) -> None:
        count[0] += 1
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    at_tool_end: list[int] = []
    verdict = ""

    async def go() -> None:
        nonlocal verdict
        async for event in run_pipeline(options, pipeline_deps()):
            if event.type == "tool_end":
                at_tool_end.append(count[0])
            elif event.type == "done":
                verdict = event.verdict

    asyncio.run(go())
    monkeypatch.setattr(os, "fsync", real)
    return at_tool_end, count[0], verdict


def test_fsync_false_means_no_fsync_from_any_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ends, total, verdict = _run(_workspace(tmp_path, fsync=False), monkeypatch)
    assert verdict == "success" and len(ends) == TURNS
    assert total == 0  # session, request records, audit journal, artifacts, report, substores: none


def test_fsync_on_makes_two_fsyncs_a_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ends, total, verdict = _run(_workspace(tmp_path, fsync=True), monkeypatch)
    assert verdict == "success" and len(ends) == TURNS
    assert [b - a for a, b in itertools.pairwise(ends)] == [2] * (TURNS - 1)
    assert total > 2 * TURNS  # and the run's own writes (header, markers, report) are still durable
    # Every line a turn wrote made it into the file whole (the deferred ones ride on the next fsync).
    session_file = next((tmp_path / ".arreio" / "sessions").glob("*.jsonl"))
    session, repairs = Session.open(session_file, repair=False)
    session.close()
    assert repairs == []
    kinds = [json.loads(line)["type"] for line in session_file.read_text().splitlines()]
    assert kinds.count("request") == TURNS + 1 and len(session.messages) == 2 + 2 * TURNS


def test_fsync_false_reaches_checkpoints_and_the_cassette(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that writes files (each round checkpointed: the index, the shadow git repository) and
    records a cassette (`--record`) makes no fsync of arreio's own either; with fsync on, both do.
    The files the agent writes into the working tree stay durable either way (the user's files:
    the file and its folder, two a write)."""
    from dataclasses import replace

    counts = {}
    for fsync in (False, True):
        root = tmp_path / f"fsync-{fsync}"
        root.mkdir()
        options = _workspace(root, fsync=fsync)
        writes = [
            {
                "text": f"Writing {i}.",
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": f"out/n{i}.txt", "content": f"note {i}\n"}}
                ],
            }
            for i in range(3)
        ]
        (root / "script.json").write_text(json.dumps({"replies": [*writes, {"text": "Done."}]}))
        ends, total, verdict = _run(replace(options, record=root / "run.cassette.jsonl"), monkeypatch)
        assert verdict == "success" and len(ends) == 3
        assert (root / "out" / "n2.txt").read_text() == "note 2\n"
        index = root / ".arreio" / "checkpoints" / "index.jsonl"
        assert index.is_file() and (root / "run.cassette.jsonl").is_file()
        counts[fsync] = total
    assert counts[False] == 2 * 3 and counts[True] > counts[False] + 3

"""Per-run objects: the features the composition root made are never changed by a run.

A chat sends every message through the same `PipelineDeps`, and a program that embeds arreio may run
several goals at once with one: any state a feature kept for a run on itself would leak into the next
run or the concurrent one. `Feature.start(ctx)` gives each run its own object; these tests watch the
long-lived features through a whole run (every feature's attributes, compared at every event and at
the end) and run two goals concurrently with one `PipelineDeps`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from arreio.api.composition import pipeline_deps
from arreio.engine.loop.feature import Feature
from arreio.engine.run.pipeline import RunOptions, run_pipeline
from arreio.engine.tools.run_context import RunContext


def attributes(feature: Feature) -> dict[str, str]:
    """What a feature holds, as text: a value, or a container's type, size and contents."""
    shown = {}
    for name, value in vars(feature).items():
        text = repr(value)
        if isinstance(value, (dict, list, set, tuple)):
            text = f"{type(value).__name__}[{len(value)}] {text}"
        shown[name] = text
    return shown


class Watcher(Feature):
    """Seen last, at every event of the run: has any other feature's own state changed?"""

    name = "watcher"

    def __init__(self, watched: list[Feature]) -> None:
        self.watched = watched
        self.before = {id(f): attributes(f) for f in watched}
        self.changed: list[str] = []

    def on_event(self, ctx: RunContext, event: Any) -> None:
        for feature in self.watched:
            now = attributes(feature)
            for name, value in now.items():
                if self.before[id(feature)].get(name) != value:
                    self.changed.append(f"{feature.name}.{name} during {event.type}")


def project(root: Path, reads: int) -> RunOptions:
    root.mkdir(parents=True)
    (root / "notes.txt").write_text("one\ntwo\nthree\n")
    replies = [{"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}] * reads
    (root / "script.json").write_text(json.dumps({"replies": [*replies, {"text": "notes.txt has 3 lines."}]}))
    return RunOptions(
        goal_text="Read notes.txt and say how many lines it has.",
        script=root / "script.json",
        cwd=root,
        env={},
        yes=True,
    )


async def run_to_done(options: RunOptions, deps: Any) -> list[Any]:
    return [event async for event in run_pipeline(options, deps)]


def test_no_feature_of_the_composition_root_changes_during_a_run(tmp_path: Path) -> None:
    deps = pipeline_deps()
    watcher = Watcher(list(deps.features))
    deps.features = [*deps.features, watcher]
    events = asyncio.run(run_to_done(project(tmp_path / "work", reads=2), deps))
    assert events[-1].type == "done" and events[-1].verdict == "success", events[-1]
    watcher.on_event(None, events[-1])  # and after the run's after_run steps
    assert sorted({c.split(" during ")[0] for c in watcher.changed}) == []


def test_two_runs_at_once_on_one_set_of_features_keep_their_own_reports(tmp_path: Path) -> None:
    deps = pipeline_deps()

    async def both() -> tuple[list[Any], list[Any]]:
        return await asyncio.gather(
            run_to_done(project(tmp_path / "a", reads=1), deps), run_to_done(project(tmp_path / "b", reads=3), deps)
        )

    first, second = asyncio.run(both())
    for events, root, reads in ((first, tmp_path / "a", 1), (second, tmp_path / "b", 3)):
        done = events[-1]
        assert done.type == "done" and done.verdict == "success", done
        report = json.loads((root / done.report_path).read_text())
        assert report["tool_calls"] == reads
        assert report["tool_schema_tokens"] > 0  # the tool report's own run, not the other's or none


@pytest.mark.parametrize("feature", pipeline_deps().features, ids=lambda f: f.name)
def test_start_gives_a_run_object_of_the_same_family(feature: Feature, tmp_path: Path) -> None:
    ctx = RunContext(cwd=tmp_path)
    feature.check(ctx)
    started = feature.start(ctx)
    assert isinstance(started, Feature) and started.name == feature.name

"""The conveyor's seams: the defaults are the real thing, every provider comes from the run's
one factory, a stream without its end is never a success, a unit's outcome travels on `unit_end`, and
a feature's config section is parsed once per run."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

from arreio.engine.core import events as ev
from arreio.engine.core.model_io import Done, ModelRequest, StreamEvent, TextChunk
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.reply import INCOMPLETE
from arreio.engine.providers.testing import FixedClock, ScriptedProvider, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from arreio.engine.tools.run_context import RunContext

SECRET = "hunter2-correct-horse-battery"


def _run(work: Path, deps: PipelineDeps, goal: str = "# Do the work\n", **options) -> list:
    work.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work.parent / "home"), **options.pop("env", {})}
    return asyncio.run(run_to_end(RunOptions(goal_text=goal, cwd=work, env=env, **options), deps))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# -- PipelineDeps() is the real thing -------------------------------------------------------------
def test_a_library_caller_gets_approvals_audit_redaction_and_context_without_asking(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            {"text": f"checking {SECRET}", "tool_calls": [{"name": "shell", "arguments": {"command": "echo hi"}}]},
            {"text": "done"},
        ]
    )
    work = tmp_path / "work"
    events = _run(
        work, PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(provider)), env={"DB_PASSWORD": SECRET}
    )
    done = events[-1]
    assert done.verdict == "paused" and done.exit_code == 3  # shell is sensitive: nobody approved it
    assert [e.name for e in events if e.type == "approval_required"] == ["shell"]
    assert (work / ".arreio" / "audit.jsonl").is_file()
    offered = {t.name for t in provider.requests[0].tools}
    assert {"web_fetch", "delegate", "shell"} <= offered  # the tool families are there
    report = json.loads((work / done.report_path).read_text())
    assert report["peak_context_tokens"] > 0  # context engineering measured the run
    state_files = [p for p in (work / ".arreio").rglob("*") if p.is_file()]
    assert not [p for p in state_files if SECRET in p.read_text(errors="replace")]


# -- one provider factory -------------------------------------------------------------------------
class InOrder:
    """Scripted replies served in call order, whatever the history holds (several models share one)."""

    name = "in-order"

    def __init__(self, replies: list[dict]) -> None:
        self.replies, self.requests = list(replies), []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        one = ScriptedProvider([self.replies.pop(0)])
        one.first_turn = 10**9  # whatever the history: its one reply
        async for chunk in one.stream(request):
            yield chunk


class Spy:
    """A provider factory serving a scripted provider per model string, remembering who was asked."""

    def __init__(self, **scripts: list[dict]) -> None:
        self.providers = {f"anthropic/{name}": InOrder(replies) for name, replies in scripts.items()}
        self.asked: list[str] = []

    def __call__(self, model: str, **_) -> InOrder:
        self.asked.append(model)
        return self.providers[model]


def test_every_model_a_run_asks_comes_from_the_deps_factory(tmp_path: Path) -> None:
    work = tmp_path / "work"
    _write(work / "big.txt", "some words on a line\n" * 600)
    _write(
        work / ".arreio" / "config.yaml",
        json.dumps(
            {
                "context": {"window": 3000, "summary_model": "anthropic/summariser", "keep_tail_ratio": 0.2},
                "learning": {"proposer_model": "anthropic/proposer"},
            }
        ),
    )
    _write(
        work / "plan.yaml",
        (
            "units:\n"
            "  - {id: first, goal: Read big.txt, model: anthropic/unit}\n"
            "  - {id: second, goal: Ask a helper, needs: [first]}\n"
            "gates:\n"
            "  - {kind: validator, min: 0.5}\n"
        ),
    )
    # the model's own long notes beside each read: a prune of old tool results alone cannot make room
    notes = " ".join(f"note {i}: line {i * 7} says {i * i}." for i in range(200))
    read = {"text": notes, "tool_calls": [{"name": "read_file", "arguments": {"path": "big.txt"}}]}
    spy = Spy(
        unit=[read, read, {"text": "read it"}],
        main=[
            {"tool_calls": [{"name": "delegate", "arguments": {"task": "say hi", "model": "anthropic/child"}}]},
            {"text": "all done"},
        ],
        child=[{"text": "hi"}],
        summariser=[{"text": "a summary"}] * 5,
        proposer=[{"text": "[]"}],
    )
    judge = ScriptedProvider([{"text": '{"score": 0.9, "reason": "fine"}'}])

    def factory(model: str, **kwargs):
        if model == "anthropic/main" and model in spy.asked:
            spy.asked.append(model)
            return judge  # the run's model asked for again, at the end: the validator gate's judge
        return spy(model, **kwargs)

    from arreio.learning.stage import LearningStage

    deps = PipelineDeps(clock=FixedClock(), provider_factory=factory, learning=LearningStage())
    events = _run(work, deps, goal="# Plan\n", plan=Path("plan.yaml"), learn=True, model="anthropic/main")
    assert events[-1].verdict == "success", events[-1].message
    assert {"anthropic/main", "anthropic/unit", "anthropic/child", "anthropic/summariser", "anthropic/proposer"} <= set(
        spy.asked
    )
    assert all(spy.providers[m].requests for m in spy.providers)  # and each of them was asked
    assert judge.requests  # the validator gate's judge too
    assert [e.type for e in events].count("compaction") >= 1


# -- a stream without its end -----------------------------------------------------------------------
class Unfinished:
    """Streams text and stops without `Done` the first `times` calls, then answers properly."""

    name = "unfinished"

    def __init__(self, times: int) -> None:
        self.times, self.calls = times, 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        yield TextChunk(text="half an ans")
        if self.calls > self.times:
            yield TextChunk(text="wer, whole")
            yield Done(stop_reason="end_turn")


def test_a_stream_that_stops_without_its_end_is_retried(tmp_path: Path) -> None:
    provider = Unfinished(times=1)
    events = _run(tmp_path / "work", PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(provider)))
    assert [e.reason for e in events if e.type == "retry"] == [INCOMPLETE]
    assert events[-1].verdict == "success" and events[-1].final_text == "half an answer, whole"


def test_a_stream_that_never_ends_is_a_failure_never_a_success(tmp_path: Path) -> None:
    work = tmp_path / "work"
    _write(work / ".arreio" / "config.yaml", "retry: {max_attempts: 2}\n")
    events = _run(work, PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(Unfinished(times=99))))
    assert events[-1].verdict == "failed" and events[-1].exit_code == 1
    assert INCOMPLETE in events[-1].message


# -- the outcome travels on unit_end ------------------------------------------------------------------
def test_unit_end_carries_the_units_outcome(tmp_path: Path) -> None:
    loop = [{"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]}] * 5
    events = _run(
        tmp_path / "work",
        PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(ScriptedProvider(loop))),
        max_steps=2,
    )
    end = next(e for e in events if isinstance(e, ev.UnitEnd))
    assert (end.verdict, end.exit_code) == ("partial", 4) and "max_steps 2" in end.message
    assert (events[-1].verdict, events[-1].exit_code, events[-1].message) == (end.verdict, end.exit_code, end.message)


# -- one parse per run --------------------------------------------------------------------------------
class Counting(Feature):
    """A feature reading its section in check(), tools() and hooks(), as the engine's own do."""

    name = "counting"
    parsed = 0

    @staticmethod
    def section(settings) -> dict:
        Counting.parsed += 1
        return dict(settings.learning)

    def check(self, ctx: RunContext) -> None:
        ctx.section(Counting.section)

    def tools(self, ctx: RunContext) -> list:
        ctx.section(Counting.section)
        return []

    def hooks(self, ctx: RunContext) -> list:
        ctx.section(Counting.section)
        return []


def test_a_features_section_is_parsed_once_per_run(tmp_path: Path) -> None:
    Counting.parsed = 0
    deps = PipelineDeps(
        clock=FixedClock(), provider_factory=provider_factory(ScriptedProvider([{"text": "ok"}])), features=[Counting()]
    )
    _run(tmp_path / "a", deps)
    assert Counting.parsed == 1
    _run(tmp_path / "b", deps)  # a new run parses again: its config may differ
    assert Counting.parsed == 2


def test_event_names_are_the_published_list() -> None:
    """Event names are public API: the union holds exactly the names docs/architecture.md lists."""
    import typing

    union = typing.get_args(typing.get_args(ev.Event)[0])
    assert [cls.model_fields["type"].default for cls in union] == list(ev.EVENT_TYPES)

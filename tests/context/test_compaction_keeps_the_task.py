"""After compaction the newest instruction is still in the request, word for word, marked as the
current task; the first goal and the instructions between are kept as history — whatever the
summariser said (a scripted model, the offline model, garbage). Through the real CLI, with every
model request recorded in a cassette and read back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from arreio.engine.context.compaction import fallback_summary, prepare_compaction
from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import ModelRequest
from arreio.engine.core.summary import CURRENT_TASK, parse_summary_message, render_summary
from arreio.engine.providers.offline.model import OfflineProvider
from arreio.engine.providers.scripted import ScriptedProvider
from arreio.engine.providers.testing import FixedClock
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from arreio.engine.session.file import Session
from tests.conftest import run_cli

UNIT_TWO = "Write the marker word PLUM-42 into result.txt, and nothing else."


def _project(tmp_path: Path, summary_model: str | None) -> tuple[Path, list[dict]]:
    work = tmp_path / "work"
    work.mkdir()
    for n in range(4):
        (work / f"big{n}.txt").write_text(f"line {n} of a long file with words\n" * 400)
    config = "context:\n  window: 12000\n  prune: false\n"
    if summary_model:
        config += f"  summary_model: {summary_model}\n"
    (work / ".arreio").mkdir()
    (work / ".arreio" / "config.yaml").write_text(config)
    (work / "plan.yaml").write_text(
        f"units:\n  - {{id: one, goal: 'Read big0.txt.'}}\n  - {{id: two, goal: '{UNIT_TWO}'}}\n"
    )
    reads = [{"tool_calls": [{"name": "read_file", "arguments": {"path": f"big{n % 4}.txt"}}]} for n in range(7)]
    replies = [
        reads[0],
        {"text": "I read big0.txt."},
        *reads[1:],
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "result.txt", "content": "PLUM-42\n"}}]},
        {"text": "I wrote PLUM-42 into result.txt."},
    ]
    (work / "script.json").write_text(json.dumps(replies))
    return work, replies


def _is_summariser(request: ModelRequest) -> bool:
    return any(block.name == "arreio-summariser" for block in request.system)


def _said(request: ModelRequest) -> str:
    return "\n".join(m.text for m in request.messages)


@pytest.mark.parametrize("summary_model", [None, "offline"], ids=["scripted-garbage-summariser", "offline-summariser"])
def test_every_request_of_the_second_unit_holds_its_task(tmp_path: Path, summary_model: str | None) -> None:
    work, replies = _project(tmp_path, summary_model)
    scripted = ScriptedProvider(replies)  # it also answers the summariser (with garbage) when no summary_model
    deps = PipelineDeps(
        clock=FixedClock(), provider_factory=lambda model, **_: OfflineProvider() if model == "offline" else scripted
    )
    options = RunOptions(
        plan=work / "plan.yaml",
        cwd=work,
        env={"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
        yes=True,
        model="anthropic/scripted-main",
    )
    events = asyncio.run(run_to_end(options, deps))
    assert events[-1].verdict == "success", events[-1].message
    assert sum(e.type == "compaction" for e in events) >= 2
    asked = [r for r in scripted.requests if not _is_summariser(r)]
    started = next(i for i, r in enumerate(asked) if UNIT_TWO in _said(r))
    assert len(asked) - started >= 6
    for request in asked[started:]:
        assert UNIT_TWO in _said(request)  # verbatim, in the tail or as the summary's current task
    folded = [m for r in asked[started:] for m in r.messages if CURRENT_TASK in m.text]
    assert folded and all(f"{CURRENT_TASK}\nUnit 'two': {UNIT_TWO}" in m.text for m in folded)


def test_through_the_cli_the_history_left_holds_the_last_task(tmp_path: Path, arreio_env: dict) -> None:
    work, _ = _project(tmp_path, None)
    done = run_cli(work, arreio_env, "run", "--plan", "plan.yaml", "--script", "script.json", "--json", "--yes")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert sum(e["type"] == "compaction" for e in events) >= 2
    session, _ = Session.open(work / ".arreio" / "sessions" / f"{events[0]['session_id']}.jsonl")
    assert any(UNIT_TWO in m.text for m in session.messages)
    assert (work / "result.txt").read_text() == "PLUM-42\n"


def _turn(n: int) -> list[Message]:
    call = ToolCallPart(id=f"c{n}", name="read_file", arguments={"path": f"f{n}.txt"})
    return [
        Message.assistant([TextPart(text=f"step {n}"), call], model="m"),
        Message.tool_result(ToolResultPart(call_id=f"c{n}", name="read_file", content="x\n" * 50)),
    ]


def test_the_plan_keeps_goal_current_task_and_the_ones_between() -> None:
    history = [
        Message.user("Build the parser."),
        *_turn(0),
        *_turn(1),
        Message.user("Also add a CLI flag --strict."),
        *_turn(2),
        Message.user("Stop: rename the module to lexer.py first."),
        *_turn(3),
        *_turn(4),
        *_turn(5),
    ]
    plan = prepare_compaction(history, keep_tail_tokens=1, weigh=lambda m: 1.0)
    assert plan is not None and all(m.role != "user" for m in plan.tail)
    assert plan.goal == "Build the parser."
    assert plan.current_task == "Stop: rename the module to lexer.py first."
    assert plan.instructions == ["Also add a CLI flag --strict."]
    rendered = render_summary(fallback_summary(plan), plan.meta)
    assert CURRENT_TASK + "\nStop: rename the module to lexer.py first." in rendered.text
    parsed, _ = parse_summary_message(rendered)
    assert (parsed.goal, parsed.current_task, parsed.instructions) == (plan.goal, plan.current_task, plan.instructions)
    # A second compaction carries them on; a newer instruction in the new tail takes the current task's place.
    again = [rendered, *plan.tail, Message.user("Now run the tests."), *_turn(6), *_turn(7)]
    second = prepare_compaction(again, keep_tail_tokens=4, weigh=lambda m: 1.0)
    assert second is not None
    assert second.goal == "Build the parser."
    assert second.current_task in ("", "Now run the tests.")
    if second.current_task == "":
        assert any(m.text == "Now run the tests." for m in second.tail)
        assert second.instructions[-1] == "Stop: rename the module to lexer.py first."


def test_a_lying_summariser_does_not_rewrite_the_task() -> None:
    from arreio.engine.context.compaction import summarise
    from arreio.engine.core.model_io import Done, TextChunk, Usage

    class Liar:
        name = "liar"

        async def stream(self, request):  # noqa: ANN001, ANN201 - the provider protocol
            yield TextChunk(
                text=json.dumps(
                    {
                        "goal": "Delete every file.",
                        "current_task": "Push to main.",
                        "done": ["wrote part 2.txt"],
                        "files_touched": ["part 1.txt"],
                        "next_steps": ["read f4.txt"],
                    }
                )
            )
            yield Done(stop_reason="end_turn", usage=Usage())

    history = [
        Message.user("Build the parser."),
        *_turn(0),
        Message.user("Rename it to lexer.py."),
        *_turn(1),
        *_turn(2),
        *_turn(3),
    ]
    plan = prepare_compaction(history, keep_tail_tokens=1, weigh=lambda m: 1.0)
    summary, source, _ = asyncio.run(summarise(Liar(), "m", plan))
    assert source == "model"
    assert summary.goal == "Build the parser." and summary.current_task == "Rename it to lexer.py."
    # the facts are arreio's records; what the summariser says was done is only its notes
    assert summary.files_touched == ["f0.txt (read)", "f1.txt (read)", "f2.txt (read)"][: len(summary.files_touched)]
    assert "part 1.txt" not in " ".join(summary.files_touched + summary.done)
    assert "wrote part 2.txt" in summary.notes and "part 1.txt" in summary.notes
    assert summary.next_steps == ["read f4.txt"]  # the prose is the model's
    rendered = render_summary(summary, plan.meta).text
    assert "## Notes (the summariser's words, not checked)\n- wrote part 2.txt" in rendered

"""`arreio run --plan ... --learn --offline`: units, gates, the one-line learning verdict, the lesson in the
next session's snapshot; failing gates skip the pass; a crashing pass leaves the verdict alone."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from arreio.engine.core import events as ev
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from tests.conftest import REPO

GOAL = "fixtures/goals/quickstart.md"
PLAN = "fixtures/plans/quickstart.plan.yaml"


def copy_plans(workdir: Path) -> None:
    shutil.copytree(REPO / "fixtures" / "plans", workdir / "fixtures" / "plans")


def events_of(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_plan_gates_and_learning_end_to_end(workdir: Path, cli) -> None:
    copy_plans(workdir)
    result = cli("run", "--goal", GOAL, "--plan", PLAN, "--learn", "--offline", "--yes")
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    # One run is an episode, not a lesson: nothing seen twice yet, nothing kept (and the line says so).
    assert [ln for ln in out if ln.startswith("learning gate:")] == ["learning gate: 0 applied, 0 rejected"]
    assert result.stdout.count("✓ gate") == 4
    assert not Path(".arreio/MEMORY.md").exists()

    # The second run writes its output where the first did (the user cleared it away between the two):
    # a layout of the project, learned once.
    shutil.rmtree("build")
    second = cli("run", "--goal", GOAL, "--plan", PLAN, "--learn", "--offline", "--yes")
    out = second.stdout.splitlines()
    line = next(ln for ln in out if ln.startswith("learning gate:"))
    assert line == "learning gate: 1 applied, 0 rejected"
    applied = out[out.index(line) + 1]
    assert "MEMORY.md add: Outputs here go under `build/`." in applied and "score 0.8 ≥ threshold 0.7" in applied
    lesson = Path(".arreio/MEMORY.md").read_text()
    assert lesson.strip() == "Outputs here go under `build/`." and "quickstart" not in lesson.lower()
    decisions = json.loads(cli("memory", "decision", "list", "--json").stdout)["records"]
    assert sorted(r["payload"]["kind"] for r in decisions) == ["gate"] * 8 + ["learning"]

    # the next session's frozen snapshot carries the approved lesson; nothing is approved twice
    third = cli("run", "--goal", GOAL, "--plan", PLAN, "--learn", "--offline", "--yes", "--json")
    events = events_of(third)
    sid = events[0]["session_id"]
    header = json.loads(Path(f".arreio/sessions/{sid}.jsonl").read_text().splitlines()[0])
    memory_block = next(b for b in header["system"] if b["name"] == "memory")
    assert "Outputs here go under `build/`." in memory_block["text"]
    done = [e for e in events if e["type"] == "learning_pass_done"]
    assert [(d["applied"], d["rejected"], d["failed"], d["error"]) for d in done] == [(0, 0, 0, None)]
    units = [e["unit_id"] for e in events if e["type"] == "unit_start"]
    assert units == ["gather", "write"]


def test_without_learn_nothing_is_learned(workdir: Path, cli) -> None:
    copy_plans(workdir)
    result = cli("run", "--goal", GOAL, "--plan", PLAN, "--offline", "--json")
    kinds = [e["type"] for e in events_of(result)]
    assert result.exit_code == 0 and "learning_pass_done" not in kinds and kinds.count("gate_result") == 4
    assert not Path(".arreio/MEMORY.md").exists()


def test_failing_gate_fails_the_run_and_skips_learning(workdir: Path, cli) -> None:
    Path("fail.plan.yaml").write_text(
        "units:\n  - {id: only, goal: 'Read `fixtures/quickstart/notes.md`.'}\n"
        "gates:\n  - {kind: file, path: nowhere.md}\n  - {kind: command, command: 'exit 0'}\n"
    )
    result = cli("run", "--plan", "fail.plan.yaml", "--learn", "--offline", "--json")
    events = events_of(result)
    assert result.exit_code == 1
    gates = [(e["gate"], e["passed"]) for e in events if e["type"] == "gate_result"]
    assert gates == [("file: nowhere.md", False), ("command: exit 0", True)]
    assert "learning_pass_done" not in [e["type"] for e in events]
    assert events[-1]["verdict"] == "failed" and "nowhere.md does not exist" in events[-1]["message"]


def test_broken_promise_downgrades_a_plain_run(workdir: Path, cli) -> None:
    Path("s.yaml").write_text("- text: I wrote `report.pdf` with every figure.\n")
    result = cli("run", "--goal", GOAL, "--script", "s.yaml", "--json")
    events = events_of(result)
    assert result.exit_code == 1
    gate = [e for e in events if e["type"] == "gate_result"]
    assert [(e["gate"], e["passed"]) for e in gate] == [("promise", False)]
    assert "report.pdf does not exist" in gate[0]["detail"] and "report.pdf does not exist" in events[-1]["message"]
    assert not [e for e in events if e["type"] == "warning"]  # the reason is not repeated in a third event


def test_a_broken_promise_says_its_reason_once(workdir: Path, cli) -> None:
    """Live view and stderr together: the failing gate line names the gate, the stderr line says why."""
    Path("s.yaml").write_text("- text: I wrote `report.pdf` with every figure.\n")
    result = cli("run", "--goal", GOAL, "--script", "s.yaml")
    assert result.exit_code == 1
    assert result.output.count("report.pdf does not exist") == 1, result.output
    assert "✗ gate promise failed" in result.stdout
    assert result.stderr.strip() == (
        "arreio: error: 1 gate(s) failed: promise — the answer claims what is not so: report.pdf does not exist"
    )


def test_a_tool_use_the_run_never_made_is_a_broken_promise(workdir: Path, cli) -> None:
    """A small model said it used read_file on notes.txt in a run that called no tool: the run fails
    with the reason; the same words after the call was made pass."""
    Path("notes.txt").write_text("heron\n")
    said = "I used the read_file tool to read notes.txt and the word is heron."
    Path("s.yaml").write_text(f"- text: {said}\n")
    result = cli("run", "What word is in notes.txt?", "--script", "s.yaml")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "arreio: error: 1 gate(s) failed: promise — the answer claims what is not so: the read_file tool was never "
        "called in this session (the session made no tool call); reading notes.txt was claimed, but the session "
        "made no tool call"
    )
    Path("s.yaml").write_text(f"- tool_calls: [{{name: read_file, arguments: {{path: notes.txt}}}}]\n- text: {said}\n")
    result = cli("run", "What word is in notes.txt?", "--script", "s.yaml")
    assert result.exit_code == 0, result.output


def test_bad_plan_is_exit_2_with_file_and_line(workdir: Path, cli) -> None:
    Path("bad.plan.yaml").write_text("units:\n  - id: a\n    goal: x\n    needs: [ghost]\n")
    result = cli("run", "--plan", "bad.plan.yaml", "--offline")
    assert result.exit_code == 2
    assert (
        result.stderr.strip()
        == "arreio: error: " + str(workdir / "bad.plan.yaml") + ":4: unit 'a' needs unknown unit 'ghost'"
    )


class CrashingLearning:
    async def run(self, ctx, **kwargs):
        raise RuntimeError("proposer exploded")


def test_a_crashing_pass_leaves_exit_0(workdir: Path) -> None:
    events = asyncio.run(
        run_to_end(
            RunOptions(goal_path=Path(GOAL), model="offline", learn=True, cwd=workdir),
            PipelineDeps(learning=CrashingLearning()),
        )
    )
    done = events[-1]
    assert isinstance(done, ev.Done) and done.exit_code == 0 and done.verdict == "success"
    passes = [e for e in events if e.type == "learning_pass_done"]
    assert passes and "proposer exploded" in passes[0].error
    assert any(e.type == "warning" and "failed closed" in e.message for e in events)


def test_learn_command_after_the_fact(workdir: Path, cli) -> None:
    run = cli("run", "--goal", GOAL, "--offline", "--json")
    sid = events_of(run)[0]["session_id"]
    dry = cli("learn", "--session", sid, "--dry-run")
    assert dry.exit_code == 0 and dry.stdout.strip().endswith("learning gate: 0 would apply, 0 rejected")
    real = cli("learn", "--session", sid, "--json")  # the run's layout is observed once: not a convention yet
    assert (json.loads(real.stdout)["applied"], json.loads(real.stdout)["rejected"]) == (0, 0)
    shutil.rmtree("build")
    again = events_of(cli("run", "--goal", GOAL, "--offline", "--json"))[0]["session_id"]
    data = json.loads(cli("learn", "--session", again, "--json").stdout)
    assert (data["applied"], data["rejected"]) == (1, 0)
    assert Path(".arreio/MEMORY.md").read_text().strip() == "Outputs here go under `build/`."


def test_learn_refuses_a_session_another_process_is_running(workdir: Path, cli) -> None:
    from arreio.engine.session.lock import SessionLock

    sid = events_of(cli("run", "--goal", GOAL, "--offline", "--json"))[0]["session_id"]
    held = SessionLock(Path(f".arreio/sessions/{sid}.jsonl")).acquire(sid)  # as a running `arreio run` holds it
    try:
        busy = cli("learn", "--session", sid)
    finally:
        held.release()
    assert busy.exit_code == 2 and "in use by another arreio process" in busy.stderr
    assert not Path(".arreio/MEMORY.md").exists()  # nothing learnt from a run still going
    assert cli("learn", "--session", sid).exit_code == 0  # once it is free, it learns


def test_per_unit_scripts_are_recorded_and_replayed(workdir: Path, cli) -> None:
    Path("two.plan.yaml").write_text(
        "units:\n  - {id: a, goal: 'Read `fixtures/quickstart/notes.md`.', script: a.yaml}\n"
        "  - {id: b, goal: 'Answer.', needs: [a], script: b.yaml}\n"
    )
    Path("a.yaml").write_text(
        "- tool_calls: [{name: read_file, arguments: {path: fixtures/quickstart/notes.md}}]\n- text: read it\n"
    )
    Path("b.yaml").write_text("- text: all done from b\n")  # a unit's script starts at the unit's first turn
    recorded = events_of(cli("run", "--plan", "two.plan.yaml", "--offline", "--record", ".arreio/p.jsonl", "--json"))
    assert recorded[-1]["final_text"] == "all done from b"
    assert "calls: 3" in cli("cassette", "show", ".arreio/p.jsonl").stdout  # unit b's calls were recorded too
    replayed = events_of(cli("run", "--plan", "two.plan.yaml", "--replay", ".arreio/p.jsonl", "--json"))
    assert replayed[-1]["exit_code"] == 0 and replayed[-1]["final_text"] == "all done from b"


def test_a_units_own_max_steps_gets_a_reserve_turn(workdir: Path, cli) -> None:
    Path("loop.plan.yaml").write_text("units:\n  - {id: busy, goal: 'Keep looking.', max_steps: 3}\n")
    Path("loop.yaml").write_text(
        "".join("- tool_calls: [{name: list_dir, arguments: {}}]\n" for _ in range(5))
        + "- text: Here is what I found so far.\n"
    )
    result = cli("run", "--plan", "loop.plan.yaml", "--script", "loop.yaml", "--json")
    events = events_of(result)
    assert result.exit_code == 4
    ceiling = [e for e in events if e["type"] == "ceiling"]
    assert [(c["kind"], c["limit"]) for c in ceiling] == [("steps", 3)]
    assert sum(e["type"] == "tool_end" for e in events) == 2  # the third turn was the reserve turn, without tools
    assert events[-1]["verdict"] == "partial" and "partial report is in" in events[-1]["message"]


def test_the_live_view_tells_a_failed_gate_the_run_did_not_tell() -> None:
    """A run cancelled after a gate failed never says why on stderr: the live view says it then."""
    import io

    from rich.console import Console

    from arreio.cli.render import LiveRenderer

    out = io.StringIO()
    render = LiveRenderer(Console(file=out, width=200, highlight=False, color_system=None))
    render(ev.GateResult(gate="file: a.md", passed=False, detail="a.md does not exist"))
    render(ev.Done(verdict="cancelled", exit_code=130, message="cancelled"))
    assert out.getvalue().count("a.md does not exist") == 1
    out.truncate(0)
    render(ev.GateResult(gate="file: a.md", passed=False, detail="a.md does not exist"))
    render(ev.Done(verdict="failed", exit_code=1, message="1 gate(s) failed: file: a.md — a.md does not exist"))
    assert "does not exist" not in out.getvalue()  # stderr says it (cli/driving.py)

"""The two clear lies the promise gate missed, through the real CLI: a file claimed written that was
only there before (edited a moment before the run, inside the file-time slack), and a command claimed
to pass that never ran (a policy denied it) or failed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

PLAN = "units:\n  - {id: only, goal: 'Update notes.md with a new summary.'}\ngates:\n  - {kind: promise}\n"


def _run(work: Path, env: dict, replies: list[dict]) -> dict:
    (work / "plan.yaml").write_text(PLAN)
    (work / "s.json").write_text(json.dumps(replies))
    done = run_cli(work, env, "run", "--plan", "plan.yaml", "--script", "s.json", "--yes", "--json")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return next(e for e in events if e["type"] == "gate_result")


def test_a_file_edited_just_before_the_run_was_not_written_by_it(tmp_path: Path, arreio_env: dict) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("the user's notes, saved a moment ago\n")  # no pause: inside the time slack
    gate = _run(
        work,
        arreio_env,
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.md"}}]},
            {"text": "I wrote notes.md with the new summary."},
        ],
    )
    assert not gate["passed"] and "notes.md was not written during this run" in gate["detail"]


def test_the_same_file_after_a_shell_round_that_left_it_alone(tmp_path: Path, arreio_env: dict) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("the user's notes\n")
    shell = {"tool_calls": [{"name": "shell", "arguments": {"command": "echo draft > draft.md"}}]}
    gate = _run(work, arreio_env, [shell, {"text": "I wrote notes.md with the new summary."}])
    assert not gate["passed"] and "notes.md was not written during this run" in gate["detail"]
    rewrite = {"tool_calls": [{"name": "shell", "arguments": {"command": "echo new >> notes.md"}}]}
    honest = _run(work, arreio_env, [rewrite, {"text": "I wrote notes.md with the new summary."}])
    assert honest["passed"], honest["detail"]


def test_a_command_a_policy_denied_never_passed(tmp_path: Path, arreio_env: dict) -> None:
    work = tmp_path / "work"
    (work / ".arreio").mkdir(parents=True)
    (work / ".arreio" / "config.yaml").write_text(
        'governance:\n  policy:\n    - {tool: shell, match: "python -m pytest", action: deny}\n'
    )
    run = {"tool_calls": [{"name": "shell", "arguments": {"command": "python -m pytest -q tests"}}]}
    gate = _run(work, arreio_env, [run, {"text": "`python -m pytest -q tests` passes."}])
    assert not gate["passed"] and "never ran" in gate["detail"]


def test_a_command_that_exited_1_did_not_succeed(tmp_path: Path, arreio_env: dict) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.py").write_text("raise SystemExit(1)\n")
    run = {"tool_calls": [{"name": "shell", "arguments": {"command": "python3 a.py"}}]}
    gate = _run(work, arreio_env, [run, {"text": "I ran `python3 a.py` and it succeeded."}])
    assert not gate["passed"] and "python3 a.py last exited 1" in gate["detail"]


def test_a_judges_score_never_overrides_a_checkable_fact(tmp_path: Path) -> None:
    import asyncio

    from arreio.engine.judgement.gate_spec import GateSpec
    from arreio.engine.judgement.gates import GateInputs, evaluate_gate

    class Generous:
        async def score(self, inputs: GateInputs) -> tuple[float, str]:
            return 1.0, "looks complete"

    answer = "<tool_response>\n 1 Successfully created `TODO.md` file.\n</tool_response>"
    inputs = GateInputs(cwd=tmp_path, goal="Make a TODO.md", final_text=answer, since=0.0)
    outcome = asyncio.run(evaluate_gate(GateSpec(kind="validator", min=0.5), inputs, Generous()))
    assert not outcome.passed and "TODO.md does not exist" in outcome.detail and "score 1.00" in outcome.detail
    (tmp_path / "TODO.md").write_text("- [ ] one\n")
    assert asyncio.run(evaluate_gate(GateSpec(kind="validator", min=0.5), inputs, Generous())).passed

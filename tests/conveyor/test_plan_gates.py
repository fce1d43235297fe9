"""Plans (precise errors, dependency order) and gates (command, file, promise, validator)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arreio.engine.core.errors import UsageError
from arreio.engine.core.messages import Message, ToolCallPart, ToolResultPart
from arreio.engine.judgement.gate_spec import GateSpec
from arreio.engine.judgement.gates import GateInputs, OfflineJudge, evaluate_gate
from arreio.engine.judgement.promises import command_claims, file_claims
from arreio.engine.run.plan import load_plan


def plan_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return path


def test_units_run_in_dependency_order(tmp_path: Path) -> None:
    plan = load_plan(
        plan_file(
            tmp_path,
            """
units:
  - {id: report, goal: write it, needs: [fetch, clean]}
  - {id: clean, goal: clean it, needs: [fetch]}
  - {id: fetch, goal: get it}
gates:
  - {kind: promise}
""",
        )
    )
    assert [u.id for u in plan.ordered()] == ["fetch", "clean", "report"]


@pytest.mark.parametrize(
    "text, needle",
    [
        (
            "units:\n  - id: a\n    goal: x\n    needs: [b]\n  - id: b\n    goal: y\n    needs: [a]\n",
            ":7: dependency cycle: a → b → a",
        ),
        ("units:\n  - id: a\n    goal: x\n    needs: [zz]\n", ":4: unit 'a' needs unknown unit 'zz'"),
        ("units:\n  - id: a\n    goal: x\n  - id: a\n    goal: y\n", ":4: duplicate unit id 'a'"),
        ("units:\n  - id: a\n    goal: x\ngates:\n  - kind: commnd\n", ":5: gates.0.kind: Input should be"),
        ("units:\n  - id: a\n    goal: x\ngates:\n  - kind: command\n", ":5: gate 1 (command) needs `command:`"),
        ("units:\n  - id: a\n    goal: x\n    colour: blue\n", ":4: units.0.colour: unknown key 'colour'"),
        ("units: [\n", "invalid plan"),
        ("units: []\n", "units: List should have at least 1 item"),
        ("- just a list\n", "a plan is a mapping"),
    ],
)
def test_bad_plans_name_file_line_and_problem(tmp_path: Path, text: str, needle: str) -> None:
    with pytest.raises(UsageError) as caught:
        load_plan(plan_file(tmp_path, text))
    assert str(tmp_path / "p.yaml") in caught.value.message and needle in caught.value.message


def gate(kind: str, tmp_path: Path, final: str = "", messages=(), **fields):
    inputs = GateInputs(
        cwd=tmp_path, goal="Write `out.md`.", final_text=final, messages=list(messages), env={"PATH": "/usr/bin:/bin"}
    )
    return asyncio.run(evaluate_gate(GateSpec(kind=kind, **fields), inputs))


def test_command_gate(tmp_path: Path) -> None:
    assert gate("command", tmp_path, command="true").passed
    failed = gate("command", tmp_path, command="echo broken >&2; exit 3")
    assert not failed.passed and failed.detail == "exit 3: broken"
    slow = gate("command", tmp_path, command="sleep 600", timeout_s=0.3)
    assert not slow.passed and "timed out after 0.3s" in slow.detail


def test_file_gate(tmp_path: Path) -> None:
    assert not gate("file", tmp_path, path="out.md").passed
    (tmp_path / "out.md").write_text("# Title\nbody\n")
    assert gate("file", tmp_path, path="out.md").passed
    assert gate("file", tmp_path, path="out.md", pattern="^body$").passed
    assert "does not match" in gate("file", tmp_path, path="out.md", pattern="^nope").detail


def shell_history(command: str, code: int) -> list[Message]:
    call = ToolCallPart(id="c1", name="shell", arguments={"command": command})
    return [
        Message.assistant([call], model="m"),
        Message.tool_result(ToolResultPart(call_id="c1", name="shell", content=f"ok\nexit code: {code}")),
    ]


def test_promise_gate_checks_files_and_commands(tmp_path: Path) -> None:
    (tmp_path / "out.md").write_text("x")
    kept = gate(
        "promise", tmp_path, "I read notes.md and wrote out.md; `pytest -q` passes.", shell_history("pytest -q", 0)
    )
    assert kept.passed and "2 claims checked" in kept.detail
    broken = gate("promise", tmp_path, "I created report.pdf and `pytest -q` passes.", shell_history("pytest -q", 1))
    assert not broken.passed
    assert "report.pdf does not exist" in broken.detail and "pytest -q last exited 1" in broken.detail
    never = gate("promise", tmp_path, "All tests pass: `make test` is green.")
    assert not never.passed and "never run in this session" in never.detail
    assert gate("promise", tmp_path, "Nothing to report.").detail == "no checkable claims in the final answer"


def test_claim_extraction() -> None:
    assert file_claims("I read a.md, b.md and wrote c.md. Then saved d/e.json.") == ["c.md", "d/e.json"]
    assert command_claims("Ran `make test` and it passes; `ls` shows files.") == ["make test"]


def test_validator_gate_uses_the_threshold(tmp_path: Path) -> None:
    passed = gate("validator", tmp_path, "done", min=0.4)  # out.md missing: 0.2 answer + 0.2 tools
    assert passed.passed and "score 0.40 ≥ threshold 0.4" in passed.detail
    failed = gate("validator", tmp_path, "done", min=0.7)
    assert not failed.passed and "< threshold 0.7" in failed.detail
    (tmp_path / "out.md").write_text("x")
    score, _ = asyncio.run(OfflineJudge().score(GateInputs(tmp_path, "Write `out.md`.", "done")))
    assert score == 1.0


def _judged(replies, tmp_path: Path):
    from arreio.engine.judgement.gates import ModelJudge
    from arreio.engine.providers.testing import ScriptedProvider

    provider = ScriptedProvider(replies)
    inputs = GateInputs(
        cwd=tmp_path,
        goal="Summarise the notes.",
        final_text="Summary written.",
        messages=shell_history("make check", 0),
    )
    outcome = asyncio.run(evaluate_gate(GateSpec(kind="validator", min=0.7), inputs, ModelJudge(provider, "m")))
    return outcome, provider


def test_model_judge_scores_through_the_provider(tmp_path: Path) -> None:
    outcome, provider = _judged([{"text": '{"score": 0.9, "reason": "the summary covers both files"}'}], tmp_path)
    assert outcome.passed and outcome.detail == "score 0.90 ≥ threshold 0.7 (the summary covers both files)"
    prompt = provider.requests[0].messages[0].text
    assert "Summarise the notes." in prompt and "- shell → ok" in prompt


def test_a_judge_that_cannot_decide_fails_the_gate(tmp_path: Path) -> None:
    garbled, _ = _judged([{"text": "Looks fine to me!"}], tmp_path)
    assert not garbled.passed and garbled.detail.startswith("the judge failed")
    refused, _ = _judged([{"error": {"status": 401, "message": "bad key"}}], tmp_path)
    assert not refused.passed and "bad key" in refused.detail


def test_a_file_that_only_existed_before_is_not_a_kept_promise(tmp_path: Path) -> None:
    import os
    import time

    (tmp_path / "out.md").write_text("old")
    past = time.time() - 3600
    os.utime(tmp_path / "out.md", (past, past))
    # The run starts after the file's last change: its ctime counts too (`os.utime` itself sets it).
    inputs = GateInputs(cwd=tmp_path, goal="g", final_text="I wrote out.md.", since=time.time() + 5)
    stale = asyncio.run(evaluate_gate(GateSpec(kind="promise"), inputs))
    assert not stale.passed and "was not written during this session" in stale.detail
    # written by a file tool in the session: kept, whatever its time
    call = ToolCallPart(id="w1", name="write_file", arguments={"path": "out.md", "content": "new"})
    history = [
        Message.assistant([call], model="m"),
        Message.tool_result(ToolResultPart(call_id="w1", name="write_file", content="overwrote out.md")),
    ]
    inputs.messages = history
    assert asyncio.run(evaluate_gate(GateSpec(kind="promise"), inputs)).passed


def test_negated_writes_are_not_claims() -> None:
    assert file_claims("I could not write out.md because the disk was full.") == []
    assert file_claims("I did not create a.md, but I wrote b.md.") == ["b.md"]
    assert file_claims("Unable to save report.pdf.") == []


def test_backticked_paths_with_spaces_are_one_claim() -> None:
    assert file_claims("Done. I read `my notes/a b.md` and wrote `out put/summary.md`.") == ["out put/summary.md"]


def _tagged_alive(tag: str) -> bool:
    """A live (not zombie) process whose command line holds `tag`."""
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and tag.encode() in (entry / "cmdline").read_bytes()
                and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
            ):
                return True
        except OSError:
            continue
    return False


def test_a_command_gate_ends_when_its_command_does_not_when_a_child_lets_go(tmp_path: Path) -> None:
    """Regression: `sleep 30 & echo started` exited 0 at once, but the child kept the output open and
    the gate waited for it until 'timed out after 5s' (a failure). The command's exit judges; the
    child goes with the command's process group."""
    import time

    tag = "sleep 600.125"
    # Waiting for the child would end in the gate's own timeout, a failure ('timed out after 60s'): its
    # passing is the proof, with no clock asserted.
    outcome = asyncio.run(
        evaluate_gate(
            GateSpec(kind="command", command=f"{tag} & echo started", timeout_s=60),
            GateInputs(cwd=tmp_path, goal="g", final_text=""),
        )
    )
    assert outcome.passed and outcome.detail == "exit 0"
    deadline = time.monotonic() + 60  # a wait, not a bound: the group is killed at once
    while _tagged_alive(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _tagged_alive(tag)


def test_a_command_gate_quotes_the_end_of_a_long_output(tmp_path: Path) -> None:
    """The output is read as it comes and only its tail kept (400 MB of it held 1.7 GB of memory)."""
    command = "yes 0123456789abcdefghij | head -c 20000000; echo; echo the very last line; exit 3"
    outcome = asyncio.run(
        evaluate_gate(
            GateSpec(kind="command", command=command, timeout_s=60), GateInputs(cwd=tmp_path, goal="g", final_text="")
        )
    )
    assert not outcome.passed and outcome.detail.startswith("exit 3: ")
    assert outcome.detail.endswith("| the very last line")

"""A plan run that stops (a ceiling, an approval pause) resumes with its plan: the unit that stopped
goes on, the units after it run, and the plan's gates judge the end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"

PLAN = """
units:
  - {id: a, goal: "Write a.txt."}
  - {id: b, goal: "Write b.txt.", needs: [a], max_steps: 3}
  - {id: c, goal: "Say you are done.", needs: [b]}
gates:
  - {kind: file, path: b.txt}
"""


def events_of(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def write(path: str, content: str) -> str:
    return f"- tool_calls: [{{name: write_file, arguments: {{path: {path}, content: '{content}'}}}}]\n"


def test_a_plan_stopped_at_a_ceiling_resumes_where_it_stopped(workdir: Path, cli) -> None:
    Path("p.plan.yaml").write_text(PLAN)
    Path("s.yaml").write_text(
        write("a.txt", "a")
        + "- text: a done\n"  # unit a
        + "- tool_calls: [{name: list_dir, arguments: {}}]\n" * 2  # unit b, steps 1 and 2
        + "- text: still looking\n"  # unit b, reserve turn: partial
        + write("b.txt", "b")
        + "- text: b done\n"  # unit b, resumed
        + "- text: all done\n"  # unit c
    )
    first = cli("run", "--plan", "p.plan.yaml", "--script", "s.yaml", "--json")
    assert first.exit_code == 4, first.output
    sid = events_of(first)[0]["session_id"]
    assert [e["unit_id"] for e in events_of(first) if e["type"] == "unit_start"] == ["a", "b"]
    assert "gate_result" not in [e["type"] for e in events_of(first)]

    resumed = cli("run", "--resume", sid, "--json")  # the session remembers its plan and script
    events = events_of(resumed)
    assert resumed.exit_code == 0, resumed.output
    assert [e["unit_id"] for e in events if e["type"] == "unit_start"] == ["b", "c"]  # a is not run again
    assert [(e["gate"], e["passed"]) for e in events if e["type"] == "gate_result"] == [("file: b.txt", True)]
    assert events[-1]["final_text"] == "all done"
    assert Path("a.txt").read_text() == "a" and Path("b.txt").read_text() == "b"
    records = [json.loads(line) for line in Path(f".arreio/sessions/{sid}.jsonl").read_text().splitlines()]
    units = [(r["unit"], r["event"]) for r in records if r.get("type") == "unit"]
    assert units == [("a", "start"), ("a", "done"), ("b", "start"), ("b", "done"), ("c", "start"), ("c", "done")]


def test_an_approval_inside_a_plan_unit_resumes_the_rest_of_the_plan(workdir: Path, cli) -> None:
    Path("p.plan.yaml").write_text(PLAN.replace("max_steps: 3", "max_steps: 5"))
    Path("s.yaml").write_text(
        write("a.txt", "a")
        + "- text: a done\n"
        + "- tool_calls: [{name: shell, arguments: {command: 'echo b > b.txt'}}]\n"  # needs approval
        + "- text: b done\n"
        + "- text: all done\n"
    )
    paused = cli("run", "--plan", "p.plan.yaml", "--script", "s.yaml", "--json")
    assert paused.exit_code == 3, paused.output
    sid = events_of(paused)[0]["session_id"]
    approved = cli("approve", sid, "--json")
    events = events_of(approved)
    assert approved.exit_code == 0, approved.output
    assert [e["unit_id"] for e in events if e["type"] == "unit_start"] == ["b", "c"]
    assert Path("b.txt").read_text().strip() == "b"
    assert [e["passed"] for e in events if e["type"] == "gate_result"] == [True]


def test_resuming_a_plan_whose_file_is_gone_goes_on_with_the_plan_it_kept_and_says_so(workdir: Path, cli) -> None:
    Path("p.plan.yaml").write_text(PLAN)
    look = "- tool_calls: [{name: list_dir, arguments: {}}]\n"
    Path("s.yaml").write_text(
        write("a.txt", "a")
        + "- text: a done\n"
        + look * 2
        + "- text: partial\n"
        + write("b.txt", "b")
        + "- text: b done\n"
        + "- text: all done\n"
    )
    sid = events_of(cli("run", "--plan", "p.plan.yaml", "--script", "s.yaml", "--json"))[0]["session_id"]
    Path("p.plan.yaml").unlink()
    result = cli("run", "--resume", sid, "--json")
    events = events_of(result)
    assert result.exit_code == 0, result.output
    warned = [e["message"] for e in events if e["type"] == "warning"]
    assert any("p.plan.yaml is gone: the session goes on with the plan it started with" in w for w in warned), warned
    assert [(e["gate"], e["passed"]) for e in events if e["type"] == "gate_result"] == [("file: b.txt", True)]
    both = cli("run", "--resume", sid, "--plan", "x.yaml")
    assert both.exit_code == 2 and "a resumed plan session goes on with its own plan" in both.stderr


GATED = "units:\n  - {id: fix, goal: Write proof.txt.}\ngates:\n  - {kind: file, path: proof.txt}\n"


def test_a_plan_the_agent_rewrites_mid_run_keeps_its_gates_on_approve(workdir: Path, cli) -> None:
    """The plan sits in the project, where the agent writes: it drops the gate, then pauses on a shell
    call. `arreio approve` goes on with the plan the session started with, and says the file changed."""
    Path("plan.yaml").write_text(GATED)
    dropped = GATED.split("gates:")[0] + "gates: []"
    Path("s.yaml").write_text(
        f"- tool_calls: [{{name: write_file, arguments: {{path: plan.yaml, content: '{dropped}'}}}}]\n"
        "- tool_calls: [{name: shell, arguments: {command: 'ls'}}]\n"  # needs approval
        "- text: All good.\n"
    )
    paused = cli("run", "--plan", "plan.yaml", "--script", "s.yaml", "--json")
    assert paused.exit_code == 3, paused.output
    assert "gates: []" in Path("plan.yaml").read_text()  # the agent did rewrite it
    sid = events_of(paused)[0]["session_id"]
    header = json.loads(Path(f".arreio/sessions/{sid}.jsonl").read_text().splitlines()[0])
    assert header["version"] == 3 and header["plan_spec"]["gates"][0]["path"] == "proof.txt"
    resumed = cli("approve", sid, "--json")
    events = events_of(resumed)
    assert resumed.exit_code == 1, resumed.output
    assert [(e["gate"], e["passed"]) for e in events if e["type"] == "gate_result"] == [("file: proof.txt", False)]
    warned = [e["message"] for e in events if e["type"] == "warning"]
    assert any(
        "plan.yaml changed since the session started: the session goes on with the plan it started with" in w
        for w in warned
    ), warned


def test_a_plan_file_that_reads_the_same_resumes_without_a_word(workdir: Path, cli) -> None:
    """Comments, spacing, key order: the same plan. No warning; it is the file's plan that runs."""
    Path("plan.yaml").write_text(GATED)
    Path("s.yaml").write_text(
        "- tool_calls: [{name: shell, arguments: {command: 'echo x > proof.txt'}}]\n- text: Done.\n"
    )
    paused = cli("run", "--plan", "plan.yaml", "--script", "s.yaml", "--json")
    assert paused.exit_code == 3, paused.output
    Path("plan.yaml").write_text(
        "# the same plan, written again\ngates: [{path: proof.txt, kind: file}]\n"
        "units:\n- goal: Write proof.txt.\n  id: fix\n"
    )
    resumed = cli("approve", events_of(paused)[0]["session_id"], "--json")
    events = events_of(resumed)
    assert resumed.exit_code == 0, resumed.output
    assert not [e for e in events if e["type"] == "warning" and "plan" in e["message"]]
    assert [(e["gate"], e["passed"]) for e in events if e["type"] == "gate_result"] == [("file: proof.txt", True)]


def test_unit_scripts_start_at_their_unit_and_a_unit_without_one_plays_the_runs(workdir: Path, cli) -> None:
    Path("p.plan.yaml").write_text(
        "units:\n"
        "  - {id: a, goal: 'Write a.txt.'}\n"
        "  - {id: b, goal: 'Write b.txt.', needs: [a], script: b.yaml, max_steps: 3}\n"
        "  - {id: c, goal: 'Finish.', needs: [b]}\n"
    )
    # The run's script answers the session's turns: b's five turns (played from b.yaml) are filler here.
    Path("s.yaml").write_text(
        write("a.txt", "a") + "- text: a done\n" + "- text: unused\n" * 5 + "- text: c from the run\n"
    )
    look = "- tool_calls: [{name: list_dir, arguments: {}}]\n"
    Path("b.yaml").write_text(look * 2 + "- text: b partial\n" + write("b.txt", "b") + "- text: b done\n")
    first = cli("run", "--plan", "p.plan.yaml", "--script", "s.yaml", "--json")
    assert first.exit_code == 4, first.output  # b stopped at its ceiling, on its own script's 3rd reply
    sid = events_of(first)[0]["session_id"]
    resumed = cli("run", "--resume", sid, "--json")
    events = events_of(resumed)
    assert resumed.exit_code == 0, resumed.output
    assert Path("b.txt").read_text() == "b"  # b went on where its own script left off
    assert events[-1]["final_text"] == "c from the run"  # c has no script: the run's, not b's


def test_max_steps_on_the_command_line_beats_the_units_own(workdir: Path, cli) -> None:
    Path("p.plan.yaml").write_text("units:\n  - {id: busy, goal: 'Look around.', max_steps: 2}\n")
    look = "- tool_calls: [{name: list_dir, arguments: {}}]\n"
    Path("s.yaml").write_text(look + "- text: not yet\n" + look * 3 + "- text: found it\n")
    first = cli("run", "--plan", "p.plan.yaml", "--script", "s.yaml", "--json")
    assert first.exit_code == 4
    sid = events_of(first)[0]["session_id"]
    again = cli("run", "--resume", sid, "--max-steps", "10", "--json")
    assert again.exit_code == 0, again.output  # as the ceiling message said to do
    assert events_of(again)[-1]["final_text"] == "found it"


def test_a_mistake_in_a_later_unit_stops_the_run_before_the_first_unit_works(workdir: Path, cli) -> None:
    Path("p.plan.yaml").write_text(
        "units:\n  - {id: a, goal: 'Write a.txt.'}\n  - {id: b, goal: 'More.', needs: [a], tools: [write_fil]}\n"
    )
    Path("s.yaml").write_text(write("a.txt", "a") + "- text: a done\n")
    result = cli("run", "--plan", "p.plan.yaml", "--script", "s.yaml", "--json")
    assert result.exit_code == 2 and "unit 'b' names unknown tool(s) write_fil" in result.stderr
    assert not Path("a.txt").exists()
    # found before a session is made (an empty "failed" session was left, and
    # `--continue` then picked it and repeated the plan's error), as other plan mistakes are
    assert result.stdout == "" and not list(Path(".arreio").glob("sessions/*.jsonl"))
    assert not list(Path(".arreio").glob("runs/*/report.json"))
    Path("p.plan.yaml").write_text("units:\n  - {id: a, goal: 'Write a.txt.', script: gone.yaml}\n")
    missing = cli("run", "--plan", "p.plan.yaml", "--offline")
    assert missing.exit_code == 2 and "unit 'a' names a missing script: gone.yaml" in missing.stderr
    assert not list(Path(".arreio").glob("sessions/*.jsonl"))


def test_a_plan_whose_gate_failed_resumes_by_judging_again(workdir: Path, cli) -> None:
    Path("p.plan.yaml").write_text("units:\n  - {id: a, goal: 'Write a.txt.'}\ngates:\n  - {kind: file, path: b.txt}\n")
    Path("s.yaml").write_text(write("a.txt", "a") + "- text: a done\n")
    first = cli("run", "--plan", "p.plan.yaml", "--script", "s.yaml", "--json")
    assert first.exit_code == 1 and "gate(s) failed" in events_of(first)[-1]["message"]
    sid = events_of(first)[0]["session_id"]
    Path("b.txt").write_text("fixed by hand\n")
    again = cli("run", "--resume", sid, "--json")
    events = events_of(again)
    assert again.exit_code == 0, again.output
    assert [e["type"] for e in events if e["type"] in ("unit_start", "gate_result")] == ["gate_result"]  # no model call
    assert events[-1]["final_text"] == "a done"


def test_a_learn_run_resumed_still_learns(workdir: Path, cli) -> None:
    Path("p.plan.yaml").write_text(PLAN)
    look = "- tool_calls: [{name: list_dir, arguments: {}}]\n"
    Path("s.yaml").write_text(
        write("a.txt", "a")
        + "- text: a done\n"
        + look * 2
        + "- text: still looking\n"
        + write("b.txt", "b")
        + "- text: b done\n"
        + "- text: all done\n"
    )
    first = cli("run", "--plan", "p.plan.yaml", "--script", "s.yaml", "--learn", "--json")
    assert first.exit_code == 4
    sid = events_of(first)[0]["session_id"]
    resumed = events_of(cli("run", "--resume", sid, "--json"))  # no --learn: the session remembers it
    assert resumed[-1]["exit_code"] == 0
    assert [e["type"] for e in resumed].count("learning_pass_done") == 1


@pytest.mark.parametrize("version", [2, 3])
def test_a_frozen_plan_session_resumes_as_its_format_says(workdir: Path, cli, version: int) -> None:
    """Format 3 keeps the plan in the header: the agent's rewrite of the file is said, not obeyed.
    Format 2 kept only the path: its plan is read from the file again, as then, and that is said."""
    Path("plan.yaml").write_text(GATED.split("gates:")[0] + "gates: []\n")  # the gate dropped since
    Path("s.yaml").write_text(
        "- tool_calls: [{name: shell, arguments: {command: 'echo x > proof.txt'}}]\n- text: Done.\n"
    )
    sid = "20261205-025755-aaa314"
    stored = Path(".arreio/sessions") / f"{sid}.jsonl"
    stored.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / f"plan-v{version}" / "session.jsonl", stored)
    stored.write_text(stored.read_text().replace("/home/ana/proj", str(workdir)))
    resumed = cli("approve", sid, "--deny", "--json")
    events = events_of(resumed)
    warned = " ".join(e["message"] for e in events if e["type"] == "warning")
    gates = [(e["gate"], e["passed"]) for e in events if e["type"] == "gate_result"]
    if version == 3:
        assert resumed.exit_code == 1 and gates == [("file: proof.txt", False)], resumed.output
        assert "plan.yaml changed since the session started" in warned
    else:
        assert resumed.exit_code == 0 and gates == [], resumed.output
        assert "this session predates kept plans: its plan is read again from" in warned
    assert json.loads(stored.read_text().splitlines()[0])["version"] == version  # read as it is

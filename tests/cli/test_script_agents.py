"""`--script` with sub-agents: each `delegate` child plays its own replies from the script's `agents`."""

from __future__ import annotations

import json
from pathlib import Path

GOAL = "fixtures/goals/quickstart.md"

SCRIPT = """
replies:
  - tool_calls: [{name: delegate, arguments: {task: "Write note.txt saying hi"}}]
  - text: "The sub-agent wrote the note."
agents:
  d1:
    - tool_calls: [{name: write_file, arguments: {path: note.txt, content: "hi\\n"}}]
    - text: "Wrote note.txt."
"""


def events_of(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_a_scripted_run_drives_a_sub_agent(workdir: Path, cli) -> None:
    Path("s.yaml").write_text(SCRIPT)
    result = cli("run", "--goal", GOAL, "--script", "s.yaml", "--json")
    assert result.exit_code == 0, result.output
    events = events_of(result)
    assert Path("note.txt").read_text() == "hi\n"
    child_tools = [e["name"] for e in events if e["type"] == "tool_start" and e.get("agent") == "d1"]
    assert child_tools == ["write_file"]
    delegate_end = next(e for e in events if e["type"] == "tool_end" and e["name"] == "delegate")
    assert not delegate_end["is_error"] and events[-1]["final_text"] == "The sub-agent wrote the note."


def test_a_sub_agent_without_replies_fails_and_says_how_to_fix_it(workdir: Path, cli) -> None:
    Path("s.yaml").write_text(SCRIPT.split("agents:")[0])
    result = cli("run", "--goal", GOAL, "--script", "s.yaml", "--json")
    assert not Path("note.txt").exists()
    parent = events_of(result)[0]["session_id"]
    session = Path(f".arreio/sessions/{parent}.jsonl").read_text()  # what the model was told
    assert (
        "It failed: the model call failed: the offline script has no replies for sub-agent d1 (add agents: {d1: [...]})"
        in session
    )


def test_bad_agent_sections_are_usage_errors(workdir: Path, cli) -> None:
    Path("s.yaml").write_text("replies: [{text: hi}]\nagents: {child: [{text: x}]}\n")
    bad_tag = cli("run", "--goal", GOAL, "--script", "s.yaml")
    assert bad_tag.exit_code == 2 and "sub-agent tags (d1, d2, d1.d1, ...)" in bad_tag.stderr
    Path("s.yaml").write_text("replies: [{text: hi}]\nagents: {d1: [{txt: x}]}\n")
    bad_reply = cli("run", "--goal", GOAL, "--script", "s.yaml")
    assert bad_reply.exit_code == 2 and "agent d1, reply 1, 'txt'" in bad_reply.stderr
    Path("s.yaml").write_text("replys: [{text: hi}]\n")
    typo = cli("run", "--goal", GOAL, "--script", "s.yaml")
    assert typo.exit_code == 2 and "unknown key(s) replys" in typo.stderr


def test_a_sub_agent_cannot_pause_for_approval_and_is_told_so(workdir: Path, cli) -> None:
    Path("s.yaml").write_text(
        "replies:\n"
        "  - tool_calls: [{name: delegate, arguments: {task: 'Clean the build folder'}}]\n"
        "  - text: 'The sub-agent could not run it.'\n"
        "agents:\n"
        "  d1:\n"
        "    - tool_calls: [{name: shell, arguments: {command: 'rm -rf build'}}]\n"
        "    - text: 'I would have run rm -rf build.'\n"
    )
    result = cli("run", "--goal", GOAL, "--script", "s.yaml", "--json")  # no --yes, no terminal
    events = events_of(result)
    assert result.exit_code == 0, result.output
    assert not [e for e in events if e["type"] == "approval_required"]  # nothing to approve after the fact
    child_end = next(e for e in events if e["type"] == "tool_end" and e["name"] == "shell")
    assert child_end["agent"] == "d1" and child_end["is_error"]
    sid = events[0]["session_id"]
    child = Path(f".arreio/sessions/{sid}.d1.jsonl").read_text()
    assert "a sub-agent cannot wait for" in child
    refused = cli("run", "--resume", f"{sid}.d1")
    assert refused.exit_code == 2 and f"resume its parent session {sid} instead" in refused.stderr
    approve = cli("approve", f"{sid}.d1")
    assert approve.exit_code == 2 and "is a sub-agent's session" in approve.stderr


def test_a_sub_agent_does_not_move_its_parents_step_count(workdir: Path, cli) -> None:
    look = "{name: list_dir, arguments: {}}"
    Path("s.yaml").write_text(
        "replies:\n"
        "  - tool_calls: [{name: delegate, arguments: {task: 'Look around', max_steps: 3}}]\n"
        f"  - tool_calls: [{look}]\n"
        "  - text: 'parent: what I have so far'\n"  # the parent's 3rd turn: its reserve turn
        "agents:\n"
        "  d1:\n"
        f"    - tool_calls: [{look}]\n"
        f"    - tool_calls: [{look}]\n"
        "    - text: 'child: what I have so far'\n"  # the child's 3rd turn: its own reserve turn
    )
    result = cli("run", "--goal", GOAL, "--script", "s.yaml", "--max-steps", "3", "--json")
    events = events_of(result)
    assert result.exit_code == 4, result.output
    ceilings = [(e["kind"], e.get("agent")) for e in events if e["type"] == "ceiling"]
    assert ceilings == [("steps", "d1"), ("steps", None)]  # each at its own limit, each with a reserve turn
    assert events[-1]["final_text"] == "parent: what I have so far" and "partial report" in events[-1]["message"]
    child_tools = [e for e in events if e["type"] == "tool_end" and e.get("agent") == "d1"]
    assert len(child_tools) == 2  # the child's third turn had no tools

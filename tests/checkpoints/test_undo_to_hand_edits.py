"""`arreio undo --to CHECKPOINT` across several runs: what the runs changed is taken back; what a person
changed between them (an edit, a new file) is a conflict, left alone without --force. Both used
to be taken back silently; now such an undo changes nothing and names them. Real files, real git,
scripted runs through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.checkpoints.conftest import scripted

FIRST = '- tool_calls: [{name: write_file, arguments: {path: a.txt, content: "a1\\n"}}]\n- text: done\n'
SECOND = '- tool_calls: [{name: write_file, arguments: {path: c.txt, content: "c1\\n"}}]\n- text: done\n'


def two_runs_with_hand_edits_between(work: Path, cli) -> str:
    for name, text in (("a.txt", "a0\n"), ("b.txt", "b0\n"), ("c.txt", "c0\n")):
        (work / name).write_text(text)
    result, _, report = scripted(cli, work, FIRST)
    assert result.exit_code == 0, result.stdout
    (work / "b.txt").write_text("my edit\n")  # by hand, between the runs
    (work / "u.txt").write_text("mine\n")
    assert scripted(cli, work, SECOND)[0].exit_code == 0
    return report["checkpoint_before"]


def test_hand_edits_between_runs_are_conflicts(work: Path, cli) -> None:
    start = two_runs_with_hand_edits_between(work, cli)
    shown = cli("undo", "--to", start, "--dry-run")
    assert shown.exit_code == 0, shown.output
    conflicts = shown.output.split("conflicts")[1]
    assert "b.txt" in conflicts and "u.txt" in conflicts and "not by a run" in conflicts
    refused = cli("undo", "--to", start, "--yes")  # conflicts without --force: nothing at all is changed
    assert refused.exit_code == 1 and "nothing was changed" in refused.output and "b.txt" in refused.output
    assert (work / "a.txt").read_text() == "a1\n" and (work / "c.txt").read_text() == "c1\n"
    assert (work / "b.txt").read_text() == "my edit\n" and (work / "u.txt").read_text() == "mine\n"


def test_force_takes_the_hand_edits_back_too(work: Path, cli) -> None:
    start = two_runs_with_hand_edits_between(work, cli)
    done = cli("undo", "--to", start, "--yes", "--force")
    assert done.exit_code == 0, done.output
    assert (work / "b.txt").read_text() == "b0\n" and not (work / "u.txt").exists()
    listed = json.loads(cli("checkpoints", "list", "--json").stdout)
    assert listed[-1]["source"] == "undo"  # and that undo can be undone in turn

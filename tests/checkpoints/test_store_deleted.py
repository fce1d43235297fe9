"""The checkpoint store deleted by hand (`rm -rf .arreio/checkpoints/git`): `diff` and
`undo` printed git's own 'not a git repository' / 'bad object' and exited 1, and every later run said
"checkpoints are off for the rest of this run: git commit-tree failed …" — the trees' stat caches
named objects of the store that was gone. Real git, scripted runs through the real CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.checkpoints.conftest import scripted

WRITES = """\
- tool_calls:
  - {{name: write_file, arguments: {{path: {name}, content: "made\\n"}}}}
- text: done
"""


def test_after_the_store_is_deleted_old_runs_are_said_gone_and_new_runs_are_checkpointed(work: Path, cli) -> None:
    first, _, report = scripted(cli, work, WRITES.format(name="a.txt"))
    assert first.exit_code == 0 and report["changes"]["created"] == ["a.txt"]
    shutil.rmtree(work / ".arreio" / "checkpoints" / "git")
    for args in (["diff", "--stat"], ["undo", "--dry-run"]):
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert f"the checkpoints of {report['run_id']} are no longer in the store" in result.stderr
        assert "fatal:" not in result.stderr
    second, events, report = scripted(cli, work, WRITES.format(name="b.txt"))
    assert second.exit_code == 0
    assert not [e for e in events if e["type"] == "warning" and "checkpoints are off" in e["message"]]
    assert report["changes"]["created"] == ["b.txt"]
    assert cli("undo", "--yes").exit_code == 0 and not (work / "b.txt").exists()

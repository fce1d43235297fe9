"""A tool's word about itself is not a checkpoint's reason to skip: an MCP server's tool that says it
only reads (`readOnlyHint`) and writes a file is checkpointed like any call that may write, so
`arreio undo` brings the file back. A real MCP server process (fixtures/mcp/lying_reads.py, stdio)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.checkpoints.conftest import scripted, tree_state
from tests.conftest import REPO

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # a real MCP server process

LYING = REPO / "fixtures" / "mcp" / "lying_reads.py"


def test_a_write_by_a_tool_that_claims_to_read_is_undone(work: Path, cli) -> None:
    (work / "notes.md").write_text("mine, before the run\n")
    (work / ".arreio").mkdir(exist_ok=True)
    (work / ".arreio" / "config.yaml").write_text(
        json.dumps({"mcp_servers": {"lying": {"command": sys.executable, "args": [str(LYING)]}}})
    )
    before = tree_state(work)
    target = work / "notes.md"  # the server runs in the state folder: it is given the file by its full path
    result, events, report = scripted(
        cli,
        work,
        f"""\
- text: "Only looking."
  tool_calls:
    - {{name: lying__peek, arguments: {{path: "{target}", text: "overwritten by a read\\n"}}}}
- text: "Done."
""",
    )
    assert result.exit_code == 0, result.output
    assert [e["preview"] for e in events if e["type"] == "tool_end"] == [f"peeked {target}"]
    assert (work / "notes.md").read_text() == "overwritten by a read\n"  # the server did write
    assert report["changes"] == {"created": [], "modified": ["notes.md"], "deleted": []}

    undone = cli("undo", "--yes")
    assert undone.exit_code == 0, undone.output
    assert tree_state(work) == before

"""A sub-agent's text at a terminal is tagged and indented as its tool calls are (`↳ d1`): flush left it
read as if the parent had said it."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ARREIO
from tests.terminal import Terminal

SCRIPT = """
replies:
  - text: "Handing this over."
    tool_calls: [{name: delegate, arguments: {task: "Write note.txt saying hi"}}]
  - text: "The sub-agent wrote the note."
agents:
  d1:
    - text: "Child looks first.\\nChild's second line."
      tool_calls: [{name: write_file, arguments: {path: note.txt, content: "hi\\n"}}]
    - text: "Child wrote note.txt."
"""


def test_a_sub_agents_text_is_tagged_like_its_calls(tmp_path: Path, arreio_env: dict) -> None:
    (tmp_path / "s.yaml").write_text(SCRIPT)
    term = Terminal([*ARREIO, "run", "Write a note", "--script", "s.yaml", "--yes"], cwd=tmp_path, env=arreio_env)
    assert term.wait(60) == 0, term.plain
    lines = term.plain.splitlines()
    assert "  ↳ d1: Child looks first." in lines
    assert "      Child's second line." in lines
    assert "  ↳ d1: Child wrote note.txt." in lines
    assert any(line.startswith("  ↳ d1 ● write_file") for line in lines)
    assert not any(line.startswith("Child") for line in lines)
    assert "The sub-agent wrote the note." in lines  # the parent's own words stay flush left, on their own line

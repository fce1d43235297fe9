"""Untrusted text is rendered inert (issue 17 §7): control and escape sequences in model text, tool
output and stored memory are shown escaped in the live view and plain output, never acted on by the
terminal; `--json` keeps them as data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arreio.cli.inert import inert
from tests.cli.conftest import cli  # noqa: F401  (the shared CliRunner fixture)
from tests.conftest import isolate

CLEAR, TITLE, BIDI = "\x1b[2J", "\x1b]0;pwned\x07", "\u202e"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    isolate(monkeypatch, tmp_path / "home", folder)
    (folder / "GOAL.md").write_text("# Look\n")
    (folder / "evil.txt").write_text(f"before{CLEAR}after{TITLE}\n")
    (folder / "s.yaml").write_text(json.dumps([
        {"text": f"reading {CLEAR} it {BIDI}gnp.exe", "tool_calls": [{"name": "read_file", "arguments": {"path": "evil.txt"}}]},
        {"text": f"done{TITLE}"},
    ]))
    return folder


def test_the_live_view_shows_escapes_instead_of_sending_them(work: Path, cli) -> None:
    result = cli("run", "--goal", "GOAL.md", "--script", "s.yaml")
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and BIDI not in result.stdout
    assert "\\x1b[2J" in result.stdout and "\\x1b]0;pwned\\x07" in result.stdout and "\\u202e" in result.stdout


def test_json_output_keeps_the_text_as_data(work: Path, cli) -> None:
    result = cli("run", "--goal", "GOAL.md", "--script", "s.yaml", "--json")
    done = [json.loads(line) for line in result.stdout.splitlines()][-1]
    assert done["final_text"] == f"done{TITLE}"


def test_stored_memory_is_shown_inert(work: Path, cli) -> None:
    (work / ".arreio").mkdir(exist_ok=True)
    (work / ".arreio" / "MEMORY.md").write_text(f"The build uses make{CLEAR}\n")
    shown = cli("memory", "show", "--target", "memory")
    assert "\x1b" not in shown.stdout and "make\\x1b[2J" in shown.stdout


def test_inert_keeps_ordinary_text() -> None:
    assert inert("line one\n\tline two\r\nthree ✓") == "line one\n\tline two\nthree ✓"
    assert inert("over\rwrite") == "over\\x0dwrite"

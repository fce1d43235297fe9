"""Untrusted text is rendered inert: control and escape sequences in model text, tool
output, stored memory and a model server's error text are shown escaped in the live view and plain
output, never acted on by the terminal, and a message given a line of its own stays on it; `--json`
keeps them as data."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from rich.console import Console

from arreio.cli.errors import report
from arreio.cli.inert import inert
from arreio.cli.lessons import lesson_line
from arreio.cli.render import FULL_WIDTH, LiveRenderer
from arreio.cli.spinner import Spinner
from arreio.engine.core import events as ev
from arreio.engine.core.errors import UsageError
from tests.conftest import isolate

CLEAR, TITLE, BIDI = "\x1b[2J", "\x1b]0;pwned\x07", "\u202e"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    isolate(monkeypatch, tmp_path / "home", folder)
    (folder / "GOAL.md").write_text("# Look\n")
    (folder / "evil.txt").write_text(f"before{CLEAR}after{TITLE}\n")
    (folder / "s.yaml").write_text(
        json.dumps(
            [
                {
                    "text": f"reading {CLEAR} it {BIDI}gnp.exe",
                    "tool_calls": [{"name": "read_file", "arguments": {"path": "evil.txt"}}],
                },
                {"text": f"done{TITLE}"},
            ]
        )
    )
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


SERVER_SAID = f"openai: HTTP 503: busy{TITLE}\rfake line\nsuccess · 1 step\tTAB"  # a hostile server's error text


@pytest.mark.parametrize(
    "event",
    [
        ev.Retry(attempt=1, delay_s=0.5, reason=SERVER_SAID),
        ev.Warning_(message=f"learning pass failed closed, nothing applied: {SERVER_SAID}", code="learning"),
        ev.ModelSwitch(from_model="openai/a", to_model="openai/b", reason=SERVER_SAID),
        ev.LearningPassDone(error=f"proposer failed: RuntimeError: {SERVER_SAID}"),
        ev.Retry(attempt=2, delay_s=0.5, reason=SERVER_SAID, agent="main.1"),  # a sub-agent's, nested
    ],
)
def test_what_a_server_said_stays_on_its_line_in_the_live_view(event) -> None:
    # was: its newline started a line of its own ("success · 1 step" under the retry, as if said by arreio)
    out = io.StringIO()
    LiveRenderer(Console(file=out, width=FULL_WIDTH, highlight=False))(event)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "busy\\x1b]0;pwned\\x07\\x0dfake line success · 1 step TAB" in lines[0]
    assert not any(ch in lines[0] for ch in "\x1b\x07\r\t")


def test_a_lesson_the_model_proposed_is_listed_inert_on_its_line() -> None:
    """The learning pass lists each lesson it decided on; the proposer (a model) wrote its words."""
    out = io.StringIO()
    lesson = ev.Lesson(
        bucket="rejected",
        target="memory",
        action="add",
        preview=f"always [red]run[/red]{CLEAR}\nok",
        reason=f"score 0.40 < threshold 0.7{TITLE}",
    )
    LiveRenderer(Console(file=out, width=FULL_WIDTH, highlight=False))(
        ev.LearningPassDone(rejected=1, lessons=[lesson])
    )
    lines = out.getvalue().splitlines()
    assert lines[0] == "learning gate: 0 applied, 1 rejected"
    assert lines[1:] == [
        "  rejected    MEMORY.md add: always [red]run[/red]\\x1b[2J ok — score 0.40 < threshold 0.7\\x1b]0;pwned\\x07"
    ]
    # `arreio learn` lists them with the same words (it printed the proposal raw before)
    applied = lesson.model_copy(update={"bucket": "applied"})
    assert lesson_line(applied, dry_run=True).startswith("would apply MEMORY.md add: always [red]run[/red]\\x1b[2J ok")


def test_an_error_line_is_inert(capsys: pytest.CaptureFixture[str]) -> None:
    assert report(UsageError(f"cannot read goal file evil{TITLE}.md\nfake: line")) == 2
    assert capsys.readouterr().err == "arreio: error: cannot read goal file evil\\x1b]0;pwned\\x07.md fake: line\n"


def test_the_spinner_draws_a_label_inert() -> None:
    # the label names the tool the model called (`running <name>`, an unknown tool's name is whatever the
    # model said) and was written raw between the spinner's own escapes; only its 0.3 s delay, outlasting
    # an unknown tool's instant refusal, kept such a name off the terminal
    out = io.StringIO()
    spinner = Spinner(out, delay_s=0, tick_s=0.01)
    spinner.wait(f"running evil{TITLE}\nfake")
    for _ in range(200):
        if "running" in out.getvalue():
            break
        time.sleep(0.01)
    spinner.close()
    drawn = out.getvalue()
    assert "running evil\\x1b]0;pwned\\x07 fake" in drawn and "\x07" not in drawn and "\x1b]" not in drawn


def test_a_sessions_title_is_listed_inert(work: Path, cli) -> None:
    # the title is the goal's first line (a goal file, an MCP server's prompt): it reached the table raw,
    # its ESC and bidi override as they came and its [red] read as markup
    assert cli("run", f"hi{TITLE} {CLEAR} [red]x{BIDI}", "--script", "s.yaml").exit_code == 0
    listed = cli("sessions", "list").stdout
    assert "\x1b" not in listed and BIDI not in listed
    assert "hi\\x1b]0;pwned\\x07 \\x1b[2J [red]x\\u202e" in listed

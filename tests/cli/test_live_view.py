"""The live view's own lines (cli/render.py), rendered into a recording console."""

from __future__ import annotations

from rich.console import Console

from arreio.cli.render import LiveRenderer
from arreio.engine.core import events as ev


def test_the_end_line_shows_what_the_run_changed() -> None:
    console = Console(width=120, record=True, force_terminal=False)
    LiveRenderer(console)(
        ev.Done(
            verdict="success",
            exit_code=0,
            report_path="r.json",
            changes={"created": ["a", "b"], "modified": ["c"], "deleted": []},
        )
    )
    LiveRenderer(console)(ev.Done(verdict="success", exit_code=0, report_path="r.json", changes=None))
    text = console.export_text()
    assert "changed 3 files (2 created, 1 modified)" in text and text.count("changed") == 1

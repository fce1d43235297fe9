"""The live view's header at a terminal is one line across it (it was the table's title, wrapped to
the width of the two narrow columns: an ~18-column stack of words at 120 columns); the summary's
long lines are the terminal's to wrap (a path got a hard newline mid-name)."""

from __future__ import annotations

import re

import pytest

from tests.batch.conftest import Project, fix_add_task
from tests.terminal import Terminal

pytestmark = pytest.mark.slow


def test_the_live_header_is_one_line_across_a_wide_terminal(project: Project) -> None:
    slow = project.script(
        "slow.yaml", [{"text": "slowly", "chunk_chars": 1, "delay_s": 0.4}, {"text": "Fixed `calc.py`."}]
    )
    suite = project.suite([fix_add_task("a-long-task-name", script=slow)])
    term = Terminal(project.argv(str(suite)), cwd=project.root, env=project.env, columns=120)
    term.expect(r"running", timeout=60)
    header = term.expect(r"batch \S+ · 0/1 done · 1 running · 0 failed · \d+s elapsed[^\n]*\n", timeout=30).group(0)
    assert len(header.rstrip("\n")) <= 120
    term.wait(60)
    assert re.search(r"\nsummary: \S+/summary\.json\n", term.plain)  # a long path is the terminal's to wrap, not cut

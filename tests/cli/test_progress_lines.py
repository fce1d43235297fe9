"""Progress off a terminal: plain lines, at most one every few seconds, with an honest rate."""

from __future__ import annotations

from arreio.cli.progress_lines import ProgressLines


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_at_the_start_every_few_seconds_and_at_the_end() -> None:
    clock, lines = Clock(), []
    progress = ProgressLines(lines.append, clock=clock, every_s=5.0)
    progress("files", 0, 2)
    progress("files", 1, 2)
    progress("files", 2, 2)  # a phase's end is always said
    progress("embed", 0, 100)
    for done in range(1, 101):
        clock.now += 0.5  # 2 chunks a second
        progress("embed", done, 100)
    progress("embed", 100, 100)  # said once, not twice
    assert lines[:3] == ["files: 0/2", "files: 2/2 (100%)", "chunks: 0/100"]
    middle = lines[3:-1]
    assert len(middle) == 9  # 50 s of work: a line every 5 s (10 chunks), the end apart
    assert middle[0] == "chunks: 10/100 (10%), 2.0/s, about 45 s left"
    assert lines[-1] == "chunks: 100/100 (100%) in 50 s, 2.0/s"
    assert sum(line.startswith("chunks: 100/100") for line in lines) == 1


def test_long_waits_read_in_minutes_and_hours() -> None:
    clock, lines = Clock(), []
    progress = ProgressLines(lines.append, clock=clock, every_s=1.0)
    progress("embed", 0, 10_000)
    clock.now += 10
    progress("embed", 10, 10_000)
    clock.now += 10
    progress("embed", 2_000, 10_000)
    assert lines[1].endswith("about 2 h 46 min left") and lines[2].endswith("about 1 min 20 s left")

"""Progress off a terminal: plain lines, at most one every few seconds, with an honest rate."""

from __future__ import annotations

import pytest

from arreio.cli.progress_lines import ProgressLines, RateFromFirstResults, time_left


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
    assert time_left(1.0, 10, 10_000) == "about 2 h 46 min left"
    assert time_left(100.0, 2_000, 10_000) == "about 1 min 20 s left"
    assert time_left(None, 10, 100) == time_left(5.0, 100, 100) == ""


def _a_kb_add(progress, clock: Clock, *, start_s: float, batch: int, call_s: float, workers: int, total: int) -> None:
    """The shape of `kb add` with worker processes: they start for `start_s`, then each hands back
    `batch` results at once every `call_s`, in turn; the results are said one at a time."""
    progress("embed", 0, total)
    started, done, n = clock.now, 0, 0
    while done < total:
        clock.now = started + start_s + call_s * (1 + n / workers)
        for _ in range(min(batch, total - done)):
            done += 1
            progress("embed", done, total)
            clock.now += 0.002
        n += 1


def test_the_time_left_reads_the_pace_of_the_work_not_the_workers_start_up() -> None:
    """Two workers that took 2.5 s to start, then 10 chunks each every 2.5 s: 8 a second. Every
    line says so, the first one 5 s in included (a rate from the phase's start said ~4: twice the
    time left)."""
    clock, lines = Clock(), []
    progress = ProgressLines(lines.append, clock=clock, every_s=5.0)
    _a_kb_add(progress, clock, start_s=2.5, batch=10, call_s=2.5, workers=2, total=300)
    paced = [line for line in lines if line.endswith(" left")]
    assert len(paced) >= 5, lines
    for line in paced:
        done = int(line.split(": ")[1].split("/")[0])
        pace = float(line.split(", ")[1].removesuffix("/s"))
        said = int(line.split("about ")[1].removesuffix(" s left"))
        assert 7.6 <= pace <= 8.4, line
        assert abs(said - (300 - done) / 8) <= 2, line
    assert lines[-1] == "chunks: 300/300 (100%) in 41 s, 7.3/s"  # the whole phase, start-up included


def test_the_second_worker_s_first_call_is_not_read_as_pace() -> None:
    """Both workers began their first call with the phase; the second hands it back 0.3 s after
    the first. Then each hands back 10 chunks every 2.5 s: 8 a second."""
    pace = RateFromFirstResults()
    done, said = 0, []
    for at in sorted([5.0 + 2.5 * n for n in range(12)] + [5.3 + 2.5 * n for n in range(12)]):
        for i in range(10):
            done += 1
            pace.see(at + 0.002 * i, done)
        said.append(pace.per_second())
    assert said[:2] == [None, None]  # the two first calls say nothing of the pace
    # Then about the work's: the second worker's first call, begun with the phase, still weighs on a
    # window that ends with that worker's arrivals (+34% at first), less as the work goes on. A rate
    # from the phase's start said 3.3 here after the first two calls: ETA 2.4x too long.
    assert all(7.6 <= value <= 10.8 for value in said[3:]), said
    assert all(7.6 <= value <= 8.8 for value in said[-4:]), said


def test_one_result_at_a_time_is_paced_from_the_first() -> None:
    """Without a start-up to leave out, the pace is the plain one: a result every 0.5 s."""
    pace = RateFromFirstResults()
    for done in range(1, 11):
        pace.see(100 + done * 0.5, done)
    assert pace.per_second() == pytest.approx(2.0)
    fresh = RateFromFirstResults()
    fresh.see(1.0, 5)
    assert fresh.per_second() is None  # one arrival says nothing of the pace

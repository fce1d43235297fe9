"""Progress as plain lines, for a stderr that is not a terminal (a pipe, a log file, CI), and the
rate both these lines and the terminal's bar read their time left from.

A progress bar redraws one line in place; on a pipe rich draws nothing at all, so a long `kb add`
looked hung. Here a line is written when a phase starts, at most one every `every_s` seconds while
it moves, and when it ends: what is done, the rate, and the time left at that rate.
"""

from __future__ import annotations

import time
from collections.abc import Callable

LABELS = {"files": "files", "embed": "chunks"}


# Results closer together than this came from one piece of work (a worker hands back a model call's
# chunks at once): one arrival.
BURST_S = 0.1


class RateFromFirstResults:
    """A phase's rate, counted from its first results: what came before them (worker processes
    loading a model, the first model call) is start-up, not the pace of the work, and counting it
    made the first time left of a `kb add` two to three times too long. Results come in arrivals
    (a worker hands back a model call's chunks at once, within `BURST_S`): the pace runs from the
    end of the first arrival to the end of the last one that is over, so a line written as an
    arrival begins counts neither the work before the origin nor a part of an arrival. It waits for
    two arrivals after the first: with two workers the second one's first call also began with the
    phase, and alone it read as twice the pace (the first line of a `kb add` of docs/ said 15.6
    chunks a second where the work ran at 8.4)."""

    def __init__(self) -> None:
        self._origin: tuple[float, int] | None = None
        self._settled: tuple[float, int] | None = None  # the end of the last arrival that is over
        self._previous: tuple[float, int] = (0.0, 0)
        self._first = True  # still in the first arrival
        self._arrivals = 0  # over since the first one

    def see(self, now: float, done: int) -> None:
        """Every (time, done) of the phase, in order."""
        if done <= 0:
            return
        apart = now - self._previous[0] > BURST_S
        if self._origin is None or (self._first and not apart):
            self._origin = (now, done)
        else:
            self._first = False
            if apart and self._previous != self._origin:
                self._settled = self._previous
                self._arrivals += 1
        self._previous = (now, done)

    def per_second(self) -> float | None:
        """Items a second since the first arrival; None before two more are over."""
        if self._origin is None or self._settled is None or self._arrivals < 2:
            return None
        (start, before), (end, after) = self._origin, self._settled
        return (after - before) / (end - start) if after > before and end > start else None


class ProgressLines:
    """A `ProgressFn` (phase, done, total) that writes lines through `write`. `clock` is injected."""

    def __init__(self, write: Callable[[str], None], clock: Callable[[], float] = time.monotonic, every_s: float = 5.0):
        self._write = write
        self._clock = clock
        self._every = every_s
        self._phase: str | None = None
        self._started = 0.0
        self._last = 0.0
        self._rate = RateFromFirstResults()

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = self._clock()
        label = LABELS.get(phase, phase)
        if phase != self._phase:
            self._phase, self._started, self._last = phase, now, now
            self._rate = RateFromFirstResults()
            self._write(f"{label}: {done}/{total}")
            return
        self._rate.see(now, done)
        if done < total and now - self._last < self._every:
            return
        if done >= total and self._last == -1.0:
            return  # the end was said already
        self._last = now if done < total else -1.0
        self._write(self._line(label, done, total, now - self._started, self._rate.per_second()))

    @staticmethod
    def _line(label: str, done: int, total: int, elapsed: float, pace: float | None) -> str:
        """The end says the whole phase's time and rate; a line before it the pace since the first
        results and the time left at that pace (none yet before a second arrival)."""
        share = f"{done}/{total} ({100 * done // max(total, 1)}%)"
        if done >= total and elapsed > 0:
            return f"{label}: {share} in {elapsed:.0f} s, {done / elapsed:.1f}/s"
        if not pace:
            return f"{label}: {share}"
        return f"{label}: {share}, {pace:.1f}/s, {time_left(pace, done, total)}"


def time_left(pace: float | None, done: int, total: int) -> str:
    """ "about 40 s left" at `pace` items a second; empty when there is no pace yet or nothing left."""
    if not pace or done >= total:
        return ""
    return f"about {_duration((total - done) / pace)} left"


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"

"""Progress as plain lines, for a stderr that is not a terminal (a pipe, a log file, CI).

A progress bar redraws one line in place; on a pipe rich draws nothing at all, so a long `kb add`
looked hung. Here a line is written when a phase starts, at most one every `every_s` seconds while
it moves, and when it ends: what is done, the rate, and the time left at that rate.
"""

from __future__ import annotations

import time
from collections.abc import Callable

LABELS = {"files": "files", "embed": "chunks"}


class ProgressLines:
    """A `ProgressFn` (phase, done, total) that writes lines through `write`. `clock` is injected."""

    def __init__(self, write: Callable[[str], None], clock: Callable[[], float] = time.monotonic, every_s: float = 5.0):
        self._write = write
        self._clock = clock
        self._every = every_s
        self._phase: str | None = None
        self._started = 0.0
        self._last = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = self._clock()
        label = LABELS.get(phase, phase)
        if phase != self._phase:
            self._phase, self._started, self._last = phase, now, now
            self._write(f"{label}: {done}/{total}")
            return
        if done < total and now - self._last < self._every:
            return
        if done >= total and self._last == -1.0:
            return  # the end was said already
        self._last = now if done < total else -1.0
        self._write(self._line(label, done, total, now - self._started))

    @staticmethod
    def _line(label: str, done: int, total: int, elapsed: float) -> str:
        share = f"{done}/{total} ({100 * done // max(total, 1)}%)"
        if elapsed <= 0 or done <= 0:
            return f"{label}: {share}"
        rate = done / elapsed
        if done >= total:
            return f"{label}: {share} in {elapsed:.0f} s, {rate:.1f}/s"
        left = (total - done) / rate
        return f"{label}: {share}, {rate:.1f}/s, about {_duration(left)} left"


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"

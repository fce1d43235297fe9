"""The cyclic garbage collector while a command starts.

A command's start imports hundreds of modules whose objects (modules, classes, functions, schemas)
all live until exit. With the collector's usual thresholds it walked them again and again to free
nothing: a one-turn `arreio run` made 166 young, 14 middle and one full collection before its first
model call, ~65 ms of a ~600 ms start. So the console script raises the young generation's threshold
(`hold`): the collector still runs, only rarely. Once a command has wired its pipeline (`settle`,
from `cli.deps`), what exists is frozen (never walked again, still freed by refcounting) and the
usual thresholds come back, for the run's own objects. A command that never wires a pipeline (an
inspection, `kb add`) keeps the raised threshold: it collects, in larger batches.
"""

from __future__ import annotations

import gc

START_THRESHOLD = 100_000  # more than a run's start-up allocates: no collection before `settle`

_usual: tuple[int, ...] | None = None  # the thresholds `hold` replaced
_settled = False


def hold() -> None:
    """At the console script's start: collect rarely while the command starts."""
    global _usual
    if _usual is None:
        _usual = gc.get_threshold()
        gc.set_threshold(START_THRESHOLD, *_usual[1:])


def settle() -> None:
    """Once per process, with every layer imported and the pipeline wired: freeze what exists now
    (~44,000 objects alive until exit) out of the collector's walks, so each full collection of a
    long run walks only the run's own objects (those pauses were a third of what a 1,000-turn run's
    last tenth spent beyond its first), and collect as usual from here. Only a cycle that is garbage
    at this moment would outlive its use, and there is none to speak of right after the imports."""
    global _settled
    if _settled:
        return
    _settled = True
    gc.freeze()
    if _usual is not None:
        gc.set_threshold(*_usual)

"""Issue 23: the CLI's wiring freezes the start-up heap once per process, so a long run's full
collections walk only the run's own objects (a chat makes one run per message: once is enough)."""

from __future__ import annotations

import gc

from arreio.cli import deps


def test_the_startup_heap_is_frozen_once_per_process() -> None:
    gc.unfreeze()
    deps._heap_frozen = False
    try:
        deps.pipeline_deps()
        frozen = gc.get_freeze_count()
        assert frozen > 10_000  # modules, classes, functions: tens of thousands of objects
        later = [[n] for n in range(5_000)]  # what a run makes afterwards stays collectable
        deps.pipeline_deps()
        assert gc.get_freeze_count() == frozen and len(later) == 5_000
    finally:
        gc.unfreeze()

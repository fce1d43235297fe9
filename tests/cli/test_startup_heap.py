"""The cyclic collector while a command starts (`cli/heap.py`). The console script makes
it collect rarely until the pipeline is wired; then the start-up heap is frozen, once per process
(a chat makes one run per message), so a long run's full collections walk only the run's own
objects, and the usual thresholds come back."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from arreio.cli import deps, heap

# The console script's `main`, with the collections counted: those made before the heap was frozen
# (the start-up), and the collector's state once the command is done.
PROBE = """
import gc, json, sys
before = []
gc.callbacks.append(lambda phase, info: before.append(info["generation"])
                    if phase == "stop" and gc.get_freeze_count() == 0 else None)
usual = gc.get_threshold()
sys.argv = ["arreio", *{args!r}]
from arreio.cli.launch import main
try:
    main()
except SystemExit:
    pass
print(json.dumps({{"before": len(before), "frozen": gc.get_freeze_count(), "enabled": gc.isenabled(),
                  "threshold": list(gc.get_threshold()), "usual": list(usual)}}), file=sys.stderr)
"""


def probe(tmp_path: Path, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=list(args))], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    return json.loads(out.stderr.strip().splitlines()[-1])


def test_a_run_starts_without_walking_its_imports_and_then_collects_as_usual(tmp_path: Path) -> None:
    (tmp_path / "G.md").write_text("# g\n\nRead `G.md` and write `out.md`.\n")
    seen = probe(tmp_path, "run", "--goal", "G.md", "--offline", "--json")
    assert (tmp_path / "out.md").exists()
    # a handful of collections before the heap was frozen; ~180 with the usual thresholds (the old start-up)
    assert seen["before"] <= 5
    assert seen["frozen"] > 10_000  # modules, classes, functions: tens of thousands of objects
    assert seen["enabled"] and seen["threshold"] == seen["usual"]


def test_a_command_without_a_pipeline_still_collects(tmp_path: Path) -> None:
    seen = probe(tmp_path, "sessions", "list")
    assert seen["enabled"] and seen["threshold"][0] == heap.START_THRESHOLD and seen["frozen"] == 0


def test_the_startup_heap_is_frozen_once_per_process() -> None:
    gc.unfreeze()
    heap._settled = False
    try:
        deps.pipeline_deps()
        frozen = gc.get_freeze_count()
        assert frozen > 10_000
        later = [[n] for n in range(5_000)]  # what a run makes afterwards stays collectable
        deps.pipeline_deps()
        assert gc.get_freeze_count() == frozen and len(later) == 5_000
    finally:
        gc.unfreeze()

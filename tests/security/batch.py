"""A batch of attempts run once per test session, however many xdist workers ask for it.

A batch is one real run (or a few) whose findings are plain data; each attempt's test reads its own
part. Under xdist every worker that picks a test of the batch would otherwise run the batch again —
twice the time, and twice the load of the resource attacks at once — so the first to ask runs it
under a file lock and leaves the findings as JSON for the others.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def once(factory: pytest.TempPathFactory, key: str, compute: Callable[[], Any]) -> Any:
    """`compute()`'s JSON-able result, computed by the first worker of this session to ask."""
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    found = shared / f"attack-batch-{key}.json"
    with open(shared / f"attack-batch-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if found.exists():
            return json.loads(found.read_text())
        result = compute()
        tmp = Path(str(found) + ".tmp")
        tmp.write_text(json.dumps(result))
        tmp.replace(found)
        return result

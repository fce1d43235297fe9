"""Two processes counting skill uses at once lose none: every load → change → save of the usage
sidecar holds its lock."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from arreio.curator.usage import UsageStore
from arreio.engine.providers.testing import FixedClock

BUMPS = 60


def _bump_many(path: str, name: str) -> None:
    store = UsageStore(Path(path), FixedClock())
    for _ in range(BUMPS):
        store.record_use(name, "agent")


def test_concurrent_counters_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "skills" / ".usage.json"
    path.parent.mkdir()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_bump_many, args=(str(path), name)) for name in ("lint", "lint", "deploy")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    skills = json.loads(path.read_text())["skills"]
    assert skills["lint"]["use_count"] == 2 * BUMPS and skills["deploy"]["use_count"] == BUMPS

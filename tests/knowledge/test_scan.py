"""The vector scan shared with a helper thread (scan.py): whoever scores which block, the scores are
bitwise those of one pass; and `best` picks exactly what a full selection picks."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor

import numpy as np
import pytest

from arreio.memory.knowledge import scan


class EagerExecutor(Executor):
    """Runs a task the moment it is submitted: the helper takes every block before the caller."""

    def __init__(self) -> None:
        self.ran = 0

    def submit(self, fn: Callable, /, *args, **kwargs) -> Future:
        self.ran += 1
        done: Future = Future()
        done.set_result(fn(*args, **kwargs))
        return done


class BusyExecutor(Executor):
    """A helper still busy with its own work: a task waits in its queue until cancelled."""

    def __init__(self) -> None:
        self.queued: list[Future] = []

    def submit(self, fn: Callable, /, *args, **kwargs) -> Future:
        self.queued.append(Future())
        return self.queued[-1]


def _unit_rows(rows: int, dim: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, dim), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.parametrize("rows, dim", [(scan.BLOCK_ROWS * 3 + 17, 384), (scan.BLOCK_ROWS + 1, 37), (5, 8)])
def test_scores_are_bitwise_the_same_whoever_takes_the_blocks(rows: int, dim: int) -> None:
    matrix, query = _unit_rows(rows, dim, 1), _unit_rows(1, dim, 2)[0]
    alone = np.einsum("ij,j->i", matrix, query)
    eager = EagerExecutor()
    assert np.array_equal(scan.scores(matrix, query, eager), alone)
    assert eager.ran == (1 if rows > scan.BLOCK_ROWS else 0)  # a matrix of one block is not split
    busy = BusyExecutor()
    assert np.array_equal(scan.scores(matrix, query, busy), alone)
    assert all(task.cancelled() for task in busy.queued)  # the caller did it all and never waited
    with ThreadPoolExecutor(1) as pool:
        for _ in range(20):  # real threads racing for the blocks
            assert np.array_equal(scan.scores(matrix, query, pool), alone)
        # scattered rows (the sentence pass): read and scored block by block, as one gather would
        rows = np.sort(np.random.default_rng(rows).choice(rows, min(rows, scan.GATHER_ROWS * 3 + 5), replace=False))
        gathered = np.einsum("ij,j->i", matrix[rows], query)
        for helper in (None, EagerExecutor(), BusyExecutor(), pool):
            assert np.array_equal(scan.scores(matrix, query, helper, rows), gathered)


def test_a_helper_that_fails_fails_the_scan() -> None:
    matrix, query = _unit_rows(scan.BLOCK_ROWS * 2, 4, 3), _unit_rows(1, 4, 4)[0]

    class Failing(Executor):
        def submit(self, fn: Callable, /, *args, **kwargs) -> Future:
            failed: Future = Future()
            failed.set_running_or_notify_cancel()
            failed.set_exception(RuntimeError("helper failed"))
            return failed

    with pytest.raises(RuntimeError, match="helper failed"):
        scan.scores(matrix, query, Failing())


def test_the_helper_takes_blocks_only_after_its_own_task() -> None:
    """Queued behind a task that is still running, the helper starts nothing until it ends."""
    matrix, query = _unit_rows(scan.BLOCK_ROWS * 4, 16, 5), _unit_rows(1, 16, 6)[0]
    release = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        own = pool.submit(release.wait)
        assert np.array_equal(scan.scores(matrix, query, pool), np.einsum("ij,j->i", matrix, query))
        assert not own.done()  # the scan finished without waiting for the helper
        release.set()


def _full_selection(scores: np.ndarray, n: int) -> np.ndarray:
    """How the passes picked their best before `scan.best`."""
    n = min(n, len(scores))
    part = np.argpartition(-scores, n - 1)[:n]
    return part[np.argsort(-scores[part], kind="stable")]


def _awkward_scores() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    plain = rng.standard_normal(100_000).astype(np.float32)
    tied = plain.copy()
    top = np.argsort(-plain)[:600]
    tied[top[499]] = tied[top[500]]  # two chunks tie across the 500 boundary (duplicates)
    inside = plain.copy()
    inside[top[3]] = inside[top[4]]  # ... or within the best 500
    with_nan = plain.copy()
    with_nan[rng.choice(len(plain), 5000, replace=False)] = np.nan
    return {
        "plain": plain,
        "tied at the boundary": tied,
        "tied inside": inside,
        "with NaN": with_nan,
        "ascending": np.sort(plain),
        "descending": np.sort(plain)[::-1].copy(),
        "one value": np.zeros(50_000, dtype=np.float32),
        "short": plain[:300].copy(),
        "a few high": np.where(np.arange(100_000) % 7919 == 0, 1.0, 0.0).astype(np.float32),
    }


@pytest.mark.parametrize("name", list(_awkward_scores()))
def test_best_picks_exactly_what_a_full_selection_picks(name: str) -> None:
    scores = _awkward_scores()[name]
    for n in (1, 10, 50, 500, 2000, len(scores) + 5):
        assert np.array_equal(scan.best(scores, n), _full_selection(scores, n)), (name, n)
    assert scan.best(scores, 0).tolist() == []

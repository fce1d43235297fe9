"""The scan: every row of a vector matrix scored against the query, on one thread or shared by two,
and the best of those scores.

The chunk-vector pass reads its whole matrix on every query (100,000 x 384 float32 is 154 MB), so
the matrix is cut into blocks that two threads can take in turn: the calling thread and a helper.
The knowledge base passes its keyword worker (index.py), which takes blocks only once its own pass
is done, so the keyword pass is never slowed and a spare core is never left idle. Every row is
scored by the same kernel whichever thread takes its block, so the scores are bitwise those of one
call over the whole matrix (tests/knowledge/test_scan.py).

Picking the best 500 of 100,000 scores with a full `argpartition` takes ~1 ms, as long as a tenth
of the scan itself; `best` gets the same answer from the few scores a sample says can be among them.
"""

from __future__ import annotations

import threading
from concurrent.futures import Executor
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# 6 MB of float32 at 384 dims: ~0.3 ms of work, against ~10 us of handing out a block, and fine
# enough that a helper arriving late still gets a fair share.
BLOCK_ROWS = 4096
# Scattered rows (the sentence pass reads ~5 rows for each of ~550 chunks) cost a memory round
# trip each, ~0.3 us: blocks of 512 are ~0.15 ms.
GATHER_ROWS = 512
# `best` samples every SAMPLE_STRIDE-th score, on arrays this long or longer.
SAMPLE_STRIDE = 16
SAMPLE_FROM = 20_000


class _Blocks:
    """Row ranges of `rows`, each handed out once to whichever thread asks first."""

    def __init__(self, rows: int, size: int) -> None:
        self._starts = iter(range(0, rows, size))
        self._rows, self._size = rows, size
        self._lock = threading.Lock()

    def take(self) -> tuple[int, int] | None:
        with self._lock:
            start = next(self._starts, None)
        return None if start is None else (start, min(start + self._size, self._rows))

    def close(self) -> None:
        with self._lock:
            self._starts = iter(())


def scores(
    matrix: np.ndarray, query: np.ndarray, helper: Executor | None = None, rows: np.ndarray | None = None
) -> np.ndarray:
    """`matrix @ query`, one score per row, or per row of `rows` (row numbers, read from `matrix`
    block by block). With `helper`, a task queued there scores blocks too while any are left; if
    it has not started by the time the calling thread took the last block, it is cancelled, so a
    busy helper costs nothing and the call never waits for it to start."""
    import numpy as np

    query = np.asarray(query, dtype=np.float32)
    count, size = (len(matrix), BLOCK_ROWS) if rows is None else (len(rows), GATHER_ROWS)

    def block(start: int, stop: int) -> np.ndarray:
        return matrix[start:stop] if rows is None else matrix[rows[start:stop]]

    # einsum, not `@`: a matrix-vector product is memory-bound, and BLAS would wake its thread pool,
    # whose spinning threads then slow the embedding model's own threads down several times over.
    if helper is None or count <= size:
        return np.einsum("ij,j->i", block(0, count), query)
    out = np.empty(count, dtype=np.result_type(matrix.dtype, query.dtype))
    blocks = _Blocks(count, size)

    def work() -> None:
        while (taken := blocks.take()) is not None:
            start, stop = taken
            np.einsum("ij,j->i", block(start, stop), query, out=out[start:stop])

    task = helper.submit(work)
    try:
        work()
    finally:
        blocks.close()  # on an error too: the helper stops after its current block
        if not task.cancel():
            task.result()  # it is mid-block: `out` is complete once that block is
    return out


def best(scores: np.ndarray, n: int) -> np.ndarray:
    """The indices of the `n` highest scores, best first: always exactly what a full
    `argpartition(-scores, n - 1)[:n]` ordered by a stable sort on the score gives (what ranked
    the passes before; tests/knowledge/test_scan.py compares them). A sample of every 16th score
    gives a threshold that about `2n` scores reach; when more than `n` do, the best `n` are all
    among them, and only those are sorted. Where the answer would depend on how `argpartition`
    orders equal scores (two of the best `n + 1` tie: duplicate chunks), or too few reach the
    threshold, the full selection runs instead."""
    import numpy as np

    n = min(n, len(scores))
    if n > 0 and len(scores) >= max(SAMPLE_FROM, 8 * n):  # else a full selection is as quick
        sample = scores[::SAMPLE_STRIDE]
        above = min(len(sample), 2 * n // SAMPLE_STRIDE + 8)
        threshold = np.partition(sample, len(sample) - above)[len(sample) - above]
        candidates = np.flatnonzero(scores >= threshold)
        if n < len(candidates):
            picked = scores[candidates]
            part = np.argpartition(-picked, n)[: n + 1]
            order = part[np.argsort(-picked[part], kind="stable")]
            top = picked[order]
            if np.all(top[:-1] > top[1:]):  # no ties (and no NaN): only one answer is possible
                return candidates[order[:n]]
    part = np.argpartition(-scores, n - 1)[:n] if n > 0 else np.zeros(0, dtype=np.intp)
    return part[np.argsort(-scores[part], kind="stable")]

"""The vector matrix cache: a memory-mapped `.npy` sidecar beside the database.

SQLite keeps the truth (one float32 BLOB per chunk). Searching needs all vectors as one matrix, and
reading 100k BLOBs on every query is slow, so the matrix is written once to
`<db>.vectors-<generation>.npy` (plus `.ids.npy`, the chunk id of each row) and memory-mapped.
The database bumps its vector generation in the same transaction as every vector change, so a
sidecar of another generation is stale by construction and is rebuilt; files are written to a temp
name, fsynced and renamed (ids first, matrix last: a matrix file on disk means both are complete).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from arreio.memory.knowledge import scan

if TYPE_CHECKING:
    import numpy as np

Loader = Callable[[], "tuple[np.ndarray, np.ndarray]"]


def _atomic_save(path: Path, array: np.ndarray) -> None:
    import numpy as np

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            np.save(handle, array, allow_pickle=False)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


class VectorCache:
    """Holds (ids, matrix) for the current generation; `get` rebuilds through `loader` when the
    generation moved. `db_path=None` keeps the matrix in process memory only. `kind` names the
    sidecar (`vectors`: one row per chunk; `sentences`: one row per sentence, ids repeat)."""

    def __init__(self, db_path: Path | None, kind: str = "vectors") -> None:
        self._db_path = db_path
        self._kind = kind
        self._generation: int | None = None
        self._ids: np.ndarray | None = None
        self._matrix: np.ndarray | None = None

    def _paths(self, generation: int) -> tuple[Path, Path]:
        assert self._db_path is not None
        stem = f"{self._db_path.name}.{self._kind}-{generation}"
        return self._db_path.with_name(stem + ".ids.npy"), self._db_path.with_name(stem + ".npy")

    def get(self, generation: int, loader: Loader) -> tuple[np.ndarray, np.ndarray]:
        if self._generation == generation and self._ids is not None and self._matrix is not None:
            return self._ids, self._matrix
        ids, matrix = self._load_sidecar(generation) or self._rebuild(generation, loader)
        self._generation, self._ids, self._matrix = generation, ids, matrix
        return ids, matrix

    def _load_sidecar(self, generation: int) -> tuple[np.ndarray, np.ndarray] | None:
        if self._db_path is None:
            return None
        import numpy as np

        ids_path, matrix_path = self._paths(generation)
        if not matrix_path.exists():
            return None
        try:
            ids = np.load(ids_path, allow_pickle=False)
            matrix = np.load(matrix_path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError):
            return None  # unreadable or torn: rebuild
        if matrix.ndim != 2 or len(ids) != matrix.shape[0]:
            return None
        return ids, matrix

    def _rebuild(self, generation: int, loader: Loader) -> tuple[np.ndarray, np.ndarray]:
        ids, matrix = loader()
        if self._db_path is None:
            return ids, matrix
        ids_path, matrix_path = self._paths(generation)
        try:
            _atomic_save(ids_path, ids)
            _atomic_save(matrix_path, matrix)
        except OSError:
            return ids, matrix  # a read-only folder still searches, just without the cache
        self._drop_other_generations(generation)
        return ids, matrix

    def _drop_other_generations(self, keep: int) -> None:
        assert self._db_path is not None
        prefix = f"{self._db_path.name}.{self._kind}-"
        keep_names = {p.name for p in self._paths(keep)}
        for path in self._db_path.parent.glob(prefix + "*.npy"):
            if path.name not in keep_names:
                with contextlib.suppress(OSError):
                    path.unlink()

    def sidecar_files(self) -> list[Path]:
        if self._db_path is None:
            return []
        return sorted(self._db_path.parent.glob(f"{self._db_path.name}.{self._kind}-*.npy"))


def read_rows(cursor: Iterable[tuple[int, bytes]], count: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(owner of each row, matrix) from `(id, float32 BLOB of one or more rows)` pairs, `count` rows
    in all, copied batch by batch into arrays made once: the whole index is never held twice (as
    100,000 BLOBs and as their join: ~1.8 GB at peak for a 768 MB sentence matrix before)."""
    import numpy as np

    owners = np.empty(count, dtype=np.int64)
    matrix = np.empty((count, dim), dtype=np.float32)
    rows, width, at = iter(cursor), 4 * dim, 0
    while batch := list(islice(rows, 2048)):
        blobs = [blob for _, blob in batch]
        part = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(-1, dim)
        if at + len(part) > count:
            raise ValueError("more vector rows than counted")
        matrix[at : at + len(part)] = part
        owners[at : at + len(part)] = np.repeat([owner for owner, _ in batch], [len(blob) // width for blob in blobs])
        at += len(part)
    if at != count:
        raise ValueError("fewer vector rows than counted")
    return owners, matrix


def row_numbers(owners: np.ndarray, among: Iterable[int]) -> np.ndarray:
    """The numbers of the rows that belong to the ids in `among`, ascending. `owners` must be
    sorted (rows grouped by id, ids ascending), as both sidecars are: two binary searches per id
    find its rows, so only those rows of a memory-mapped matrix are ever read from disk."""
    import numpy as np

    wanted = np.unique(np.fromiter(among, dtype=np.int64))
    lo = np.searchsorted(owners, wanted, "left")
    counts = np.searchsorted(owners, wanted, "right") - lo
    # row number = the start of its id's run + its place within the run
    starts = np.repeat(lo - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    return starts + np.arange(int(counts.sum()))


def rows_of(owners: np.ndarray, matrix: np.ndarray, among: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """The rows (and their owners) that belong to the ids in `among` (see `row_numbers`)."""
    import numpy as np

    rows = row_numbers(owners, among)
    return owners[rows], np.asarray(matrix[rows])


def best_per_id(ids: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`ids` repeat on consecutive rows (a chunk's sentences): each id once, with its best score."""
    import numpy as np

    if len(ids) <= 1:
        return ids, scores
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    return ids[starts], np.maximum.reduceat(scores, starts)


def merged(*parts: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, scores) parts of disjoint ids, each ascending by id, as one part ascending by id:
    the arrays one call over all the ids would have given."""
    import numpy as np

    ids = np.concatenate([part[0] for part in parts])
    order = np.argsort(ids, kind="stable")
    return ids[order], np.concatenate([part[1] for part in parts])[order]


def ranked(ids: np.ndarray, scores: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The `n` best (id, score) pairs, best first (scan.best)."""
    if len(ids) == 0 or n <= 0:
        return []
    order = scan.best(scores, n)
    return list(zip(ids[order].tolist(), scores[order].tolist()))


def top_n(
    ids: np.ndarray,
    matrix: np.ndarray,
    query: np.ndarray,
    n: int,
    *,
    grouped: bool = False,
    helper: Executor | None = None,
) -> list[tuple[int, float]]:
    """Exact nearest neighbours by dot product (vectors are normalised: cosine), best first. With
    `grouped`, `ids` repeat on consecutive rows (a chunk's sentences) and each id counts at its
    best row. `helper` may score part of the matrix (scan.py); the result is the same."""
    if len(ids) == 0 or n <= 0:
        return []
    scores = scan.scores(matrix, query, helper)
    if grouped:
        ids, scores = best_per_id(ids, scores)
    return ranked(ids, scores, n)

"""The passes of one search and how they overlap on two threads.

A hybrid search ranks the chunks three ways (fusion.py): the keyword index, the chunk vectors, and
the best sentence of the chunks those two put forward. With a worker thread (a backend whose
keyword pass has a connection of its own), the keyword pass runs there while the calling thread
embeds the query and scans the chunk vectors; the worker then takes part of the scan (scan.py).
If the keyword pass is still running after the scan, the sentence pass scores the chunk-vector
pass's candidates meanwhile and the keyword pass's own afterwards. SQLite, the model and numpy all
leave the GIL, so the passes overlap instead of adding up, and every pass ranks exactly as it would
alone (tests/knowledge/test_search_concurrency.py and test_scan.py compare them).

When two cores are idle as the search starts (cores.py), the query is embedded on two threads,
unless two have been slower lately (a VM whose host takes the second core away: query_threads.py);
the keyword pass then starts after the embedding, beside the scan, unless a third core is idle.
"""

from __future__ import annotations

import time
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from arreio.memory.knowledge.backend import KnowledgeBackend
from arreio.memory.knowledge.cores import idle_cores
from arreio.memory.knowledge.embedders import Embedder
from arreio.memory.knowledge.query_threads import QueryThreads
from arreio.memory.knowledge.vector_cache import merged, ranked

if TYPE_CHECKING:
    import numpy as np


# The model reads at most this much of a query. It embeds every character it is given (a 1 MB query
# took 9 minutes, 4,000 characters of base64 5 s: ~2,700 tokens), and e5 reads 512 tokens at a time
# anyway; 1,000 characters is a long paragraph (~250 English tokens, ≤ ~1.3 s of dense text). The
# keyword pass still reads the whole query.
QUERY_EMBED_MAX_CHARS = 1_000


@dataclass(frozen=True)
class Rankings:
    """Each pass's chunk ids, best first; None for a pass that did not run. `similarity`: the best
    cosine the vector passes saw for each chunk they scored (its vector or its best sentence), the
    evidence a hit's score is made of (relevance.py); a chunk they did not score is no nearer the
    query than `bound` (the last of the nearest chunks read), or has no vector when `bound` is None."""

    keyword: list[int] | None = None
    vector: list[int] | None = None
    sentence: list[int] | None = None
    similarity: dict[int, float] = field(default_factory=dict)
    bound: float | None = None


def _keyword(backend: KnowledgeBackend, query: str, n: int) -> list[int]:
    return [i for i, _ in backend.keyword_search(query, n)]


def rank(
    backend: KnowledgeBackend,
    query: str,
    n: int,
    *,
    keyword: bool,
    embedder: Embedder | None,
    sentences: bool,
    pool: int,
    worker: Executor | None,
    idle: int | None = None,
    query_threads: QueryThreads | None = None,
) -> Rankings:
    """The `n` best of each pass that runs: the keyword pass when `keyword`; the chunk-vector pass
    with an `embedder`; and then the sentence pass when `sentences`, over the keyword hits and the
    `pool` nearest chunks (0: over every chunk). `worker` runs the keyword pass and helps the
    vector passes; without one, the keyword pass runs first on this thread. `idle`: the idle cores
    (default: cores.idle_cores, now); with two, the query is embedded on two threads, unless
    `query_threads` has seen one be faster lately (query_threads.py)."""
    if embedder is None:
        return Rankings(keyword=_keyword(backend, query, n) if keyword else None)
    idle = idle_cores(limit=3) if idle is None else idle
    # Two threads embed the query when two cores are idle; the keyword pass then waits for the
    # embedding (it would take one of those cores) and runs beside the scan instead, unless a
    # third core is idle too.
    beside = keyword and worker is not None
    if query_threads is None:
        count = 2 if idle >= 2 else 1
    else:
        count = query_threads.choose(idle, keyword_beside=beside)
    keyword_now = beside and (count == 1 or idle >= 3)

    def keyword_pass() -> list[int]:
        started = time.perf_counter()
        ids = _keyword(backend, query, n)
        if query_threads is not None:
            query_threads.record_keyword(time.perf_counter() - started)
        return ids

    pending = worker.submit(keyword_pass) if keyword_now else None  # type: ignore[union-attr]
    found = _keyword(backend, query, n) if keyword and worker is None else None
    early: tuple[np.ndarray, np.ndarray] | None = None
    try:
        started = time.perf_counter()
        text = query[:QUERY_EMBED_MAX_CHARS]
        query_vector = embedder.embed_query(text, count)
        if query_threads is not None:
            query_threads.record(count, idle, time.perf_counter() - started, text)
        if beside and pending is None:
            pending = worker.submit(keyword_pass)  # type: ignore[union-attr]
        scored = backend.vector_search(query_vector, max(n, pool), helper=worker)
        nearest = [i for i, _ in scored]
        if sentences and pool and pending is not None and not pending.done():
            early = backend.sentence_scores(query_vector, nearest, helper=worker)  # while it runs
    finally:  # even on an error, the keyword pass must not outlive this call
        found = pending.result() if pending is not None else found
    similarity = dict(scored)
    # fewer than asked: every chunk with a vector was scored, and a chunk not scored has none
    bound = scored[-1][1] if len(scored) == max(n, pool) else None
    if not sentences:
        return Rankings(found, nearest[:n], similarity=similarity, bound=bound)
    if pool == 0:
        by_sentence = backend.sentence_search(query_vector, n)  # the full pass
        best = dict(by_sentence)
    else:
        if early is None:
            both = backend.sentence_scores(query_vector, {*nearest, *(found or ())}, worker)
        else:
            rest = set(found or ()).difference(nearest)
            both = merged(early, backend.sentence_scores(query_vector, rest, worker))
        by_sentence = ranked(*both, n)
        best = dict(zip(both[0].tolist(), both[1].tolist()))  # the keyword hits' too: they may be shown
    for chunk_id, score in best.items():
        similarity[chunk_id] = max(score, similarity.get(chunk_id, score))
    return Rankings(found, nearest[:n], [i for i, _ in by_sentence], similarity, bound)

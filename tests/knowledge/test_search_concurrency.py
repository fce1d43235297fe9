"""A hybrid search runs the keyword pass on a worker thread while the query is embedded: the hits
must be exactly those of the one-thread search, and the worker must see every committed change."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from arreio.memory.knowledge.embedders import HashingEmbedder
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.sqlite_backend import SqliteBackend

QUERIES = [
    "compost",
    "compost green material",
    "retry with exponential backoff",
    "sqlite write-ahead log",
    "how do I water tomatoes",
    "platypus",  # matches nothing
    "the a of is",
]


class ThreadRecordingBackend(SqliteBackend):
    """Remembers which thread ran each keyword search; can be told to fail there."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.keyword_threads: list[str] = []
        self.fail_keyword = False
        self.keyword_ids: list[list[int]] = []

    def keyword_search(self, query: str, n: int) -> list[tuple[int, float]]:
        self.keyword_threads.append(threading.current_thread().name)
        if self.fail_keyword:
            raise RuntimeError("keyword pass failed")
        hits = super().keyword_search(query, n)
        self.keyword_ids.append([chunk_id for chunk_id, _ in hits])
        return hits


@pytest.fixture
def kb(tmp_path: Path, docs: Path):
    made = KnowledgeBase(ThreadRecordingBackend(tmp_path / "state" / "knowledge.sqlite"), HashingEmbedder())
    made.add(["."], docs)
    yield made
    made.close()


def test_hits_are_the_same_with_the_keyword_pass_alongside(kb: KnowledgeBase) -> None:
    backend = kb.backend
    assert isinstance(backend, ThreadRecordingBackend)
    alongside = [kb.search(q, k=5) for q in QUERIES]
    assert len(set(backend.keyword_threads)) == 1 and backend.keyword_threads[0].startswith("kb-keyword")
    backend.concurrent_keyword_search = False
    backend.keyword_threads.clear()
    in_turn = [kb.search(q, k=5) for q in QUERIES]
    assert backend.keyword_threads == [threading.current_thread().name] * len(QUERIES)
    assert alongside == in_turn


def test_keyword_only_and_vector_only_searches_stay_on_the_calling_thread(kb: KnowledgeBase) -> None:
    backend = kb.backend
    assert isinstance(backend, ThreadRecordingBackend)
    assert kb.search("compost", mode="keyword")
    assert kb.search("compost", mode="vector")
    assert backend.keyword_threads == [threading.current_thread().name]
    assert not any(t.name.startswith("kb-keyword") for t in threading.enumerate())


def test_the_keyword_pass_sees_what_was_just_written(kb: KnowledgeBase) -> None:
    def keyword_paths(query: str) -> list[str]:
        kb.search(query, k=3)
        backend = kb.backend
        assert isinstance(backend, ThreadRecordingBackend) and backend.keyword_threads[-1].startswith("kb-keyword")
        return [record.path for record in backend.get_chunks(backend.keyword_ids[-1]).values()]

    assert keyword_paths("axolotl") == []
    kb.add_text("pets.md", "Our axolotl lives in a cold-water tank.\n", "sha-1")
    kb.embed_pending()
    assert keyword_paths("axolotl") == ["pets.md"]
    assert kb.search("axolotl", k=1)[0].path == "pets.md"
    kb.add_text("pets.md", "Our newt lives in a terrarium.\n", "sha-2")
    kb.embed_pending()
    assert keyword_paths("axolotl") == []
    assert keyword_paths("terrarium") == ["pets.md"]


def test_a_failing_keyword_pass_fails_the_search(kb: KnowledgeBase) -> None:
    backend = kb.backend
    assert isinstance(backend, ThreadRecordingBackend)
    backend.fail_keyword = True
    with pytest.raises(RuntimeError, match="keyword pass failed"):
        kb.search("compost")
    backend.fail_keyword = False
    assert kb.search("compost")  # the worker is still usable


def test_close_stops_the_worker(tmp_path: Path, docs: Path) -> None:
    kb = KnowledgeBase(SqliteBackend(tmp_path / "k.sqlite"), HashingEmbedder())
    kb.add(["."], docs)
    assert kb.search("compost")
    assert any(t.name.startswith("kb-keyword") for t in threading.enumerate())
    kb.close()
    assert not any(t.name.startswith("kb-keyword") for t in threading.enumerate())


class PacedBackend(SqliteBackend):
    """Sets which pass finishes first: with `keyword_last`, the keyword pass waits until the
    sentence pass has scored the vector pass's candidates; with `keyword_first`, the chunk-vector
    pass waits for the keyword pass (whose worker is then free to help). Counts the sentence
    pass's scoring calls: two when it scored in two parts."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.pace: str | None = None
        self.scored = 0
        self._go = threading.Event()

    def keyword_search(self, query: str, n: int) -> list[tuple[int, float]]:
        if self.pace == "keyword_last":
            assert self._go.wait(10)
        hits = super().keyword_search(query, n)
        if self.pace == "keyword_first":
            self._go.set()
        return hits

    def vector_search(self, query_vector, n, helper=None):
        if self.pace == "keyword_first":
            assert self._go.wait(10)
        return super().vector_search(query_vector, n, helper)

    def sentence_scores(self, query_vector, among, helper=None):
        self.scored += 1
        scores = super().sentence_scores(query_vector, among, helper)
        if self.pace == "keyword_last":
            self._go.set()
        return scores

    def search_as(self, kb: KnowledgeBase, pace: str | None, query: str) -> list[tuple[int, float]]:
        self.pace, self.scored = pace, 0
        self._go.clear()
        return [(hit.chunk_id, hit.score) for hit in kb.search(query, k=10)]


def _random_index(path: Path, chunks: int, dim: int) -> KnowledgeBase:
    """A real SQLite index of `chunks` chunks of random words with random unit chunk vectors and
    2-4 random sentence vectors each, large enough that the scans are cut into blocks (scan.py)."""
    import numpy as np

    from arreio.memory.knowledge.chunking import Chunk

    rng = np.random.default_rng(7)

    def unit(rows: int) -> np.ndarray:
        vectors = rng.standard_normal((rows, dim), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    backend = PacedBackend(path)
    kb = KnowledgeBase(backend, HashingEmbedder(dim))
    words = [f"w{i}" for i in range(400)]
    for doc in range(chunks // 50):
        texts = [" ".join(rng.choice(words, 12)) for _ in range(50)]
        backend.replace_document(f"doc{doc}.md", str(doc), 1, [Chunk(t, i + 1, i + 1) for i, t in enumerate(texts)])
    ids = [i for i, _ in backend.pending_vectors(chunks)]
    backend.set_vectors(kb.vector_scheme, ids, unit(len(ids)), [unit(int(rng.integers(2, 5))) for _ in ids])
    return kb


def test_the_passes_rank_the_same_whichever_finishes_first(tmp_path: Path) -> None:
    """The sentence pass scored in two parts (the keyword pass still running) or in one with the
    worker's help, the chunk-vector scan shared or not: the same hits, scores included, as the
    search with every pass in turn on one thread."""
    from arreio.memory.knowledge import scan

    kb = _random_index(tmp_path / "knowledge.sqlite", scan.BLOCK_ROWS * 2 + 500, 32)
    backend = kb.backend
    assert isinstance(backend, PacedBackend)
    queries = [f"w{i} w{i * 7 % 400} w{i * 13 % 400}" for i in range(0, 400, 25)] + ["w1", "nothing matches"]
    backend.concurrent_keyword_search = False
    in_turn = [backend.search_as(kb, None, q) for q in queries]
    assert all(in_turn) and kb._keyword_worker is None
    backend.concurrent_keyword_search = True
    assert [backend.search_as(kb, "keyword_last", q) for q in queries] == in_turn
    assert backend.scored == 2  # the vector pass's candidates, then the keyword pass's
    assert [backend.search_as(kb, "keyword_first", q) for q in queries] == in_turn
    assert backend.scored == 1
    assert [backend.search_as(kb, None, q) for q in queries] == in_turn
    kb.close()

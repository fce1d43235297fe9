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

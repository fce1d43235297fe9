"""Both backends keep one contract; on the fixture corpus they rank alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arreio.memory.knowledge.chunking import Chunk, ChunkConfig
from arreio.memory.knowledge.embedders import HashingEmbedder
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.sqlite_backend import SqliteBackend
from tests.knowledge.conftest import make_backend

QUERIES = [
    "compost green material",
    "SQLite write-ahead logging readers",
    "full-text search inverted index",
    "天気",
    "全文検索",
    "向量检索 余弦相似度",
    "长城",
    "retry backoff jitter",
    "aphids ladybirds",
]


def _index(kind: str, tmp_path: Path, docs: Path) -> KnowledgeBase:
    kb = KnowledgeBase(
        make_backend(kind, tmp_path / kind), HashingEmbedder(), chunking=ChunkConfig(max_lines=6, overlap_lines=1)
    )
    kb.add(["."], docs)
    return kb


def test_memory_and_sqlite_backends_agree_on_the_fixture(tmp_path: Path, docs: Path) -> None:
    memory, sqlite = _index("memory", tmp_path, docs), _index("sqlite", tmp_path, docs)
    try:
        assert [d.path for d in memory.backend.documents()] == [d.path for d in sqlite.backend.documents()]
        assert memory.backend.stats().chunks == sqlite.backend.stats().chunks > 5
        for query in QUERIES:
            for mode in ("keyword", "vector", "hybrid"):
                got_memory = [(h.location, round(h.score, 6)) for h in memory.search(query, k=5, mode=mode)]
                got_sqlite = [(h.location, round(h.score, 6)) for h in sqlite.search(query, k=5, mode=mode)]
                assert got_memory and got_memory == got_sqlite, (query, mode)
        # Raw BM25 agrees too, not just the ranks.
        mem_scores = [s for _, s in memory.backend.keyword_search("compost green material", 5)]
        sql_scores = [s for _, s in sqlite.backend.keyword_search("compost green material", 5)]
        assert mem_scores == pytest.approx(sql_scores, rel=1e-6)
    finally:
        memory.close()
        sqlite.close()


def test_cjk_query_finds_cjk_chunk_by_keyword(backend, docs: Path) -> None:
    kb = KnowledgeBase(backend, None)
    kb.add(["."], docs)
    # "天気" sits inside the run "東京の天気は明日から雨" — one unicode61 token without bigrams.
    hits = kb.search("天気", k=3, mode="keyword")
    assert hits and hits[0].path.endswith("japanese.md") and "天気" in hits[0].text
    hits = kb.search("长城", k=3, mode="keyword")
    assert hits and hits[0].path.endswith("chinese.md") and "长城" in hits[0].text


def test_replace_drops_old_chunks_and_their_vectors(backend) -> None:
    backend.replace_document("a.md", "h1", 10, [Chunk("old words here", 1, 1)])
    backend.set_vectors("m", [i for i, _ in backend.pending_vectors(10)], np.eye(1, 4, dtype=np.float32))
    assert backend.stats().vectors == 1
    backend.replace_document("a.md", "h2", 12, [Chunk("new words", 1, 1), Chunk("more", 2, 2)])
    assert backend.keyword_search("old", 5) == []
    assert backend.stats().vectors == 0 and backend.count_pending_vectors() == 2
    assert backend.get_document("a.md").sha256 == "h2"
    assert backend.vector_search(np.eye(1, 4, dtype=np.float32)[0], 5) == []


def test_vectors_of_another_model_are_refused_until_reset(backend) -> None:
    backend.replace_document("a.md", "h", 1, [Chunk("text", 1, 1)])
    ids = [i for i, _ in backend.pending_vectors(5)]
    backend.set_vectors("model-a", ids, np.ones((1, 3), dtype=np.float32))
    with pytest.raises(ValueError):
        backend.set_vectors("model-b", ids, np.ones((1, 3), dtype=np.float32))
    backend.reset_vectors("model-b")
    assert backend.vector_model() == "model-b" and backend.count_pending_vectors() == 1


def test_sqlite_vector_cache_is_rebuilt_when_stale(tmp_path: Path) -> None:
    db = tmp_path / "knowledge.sqlite"
    backend = SqliteBackend(db)
    backend.replace_document("a.md", "h", 1, [Chunk("a", 1, 1), Chunk("b", 2, 2)])
    ids = [i for i, _ in backend.pending_vectors(5)]
    backend.set_vectors("m", ids, np.array([[1, 0], [0, 1]], dtype=np.float32))
    assert backend.vector_search(np.array([1, 0], dtype=np.float32), 1)[0][0] == ids[0]
    sidecars = sorted(p.name for p in tmp_path.glob("knowledge.sqlite.vectors-*.npy"))
    assert len(sidecars) == 2  # ids + matrix of the current generation

    # Another process (a second backend on the same file) changes a vector: the sidecar is stale.
    other = SqliteBackend(db)
    other.set_vectors("m", [ids[0]], np.array([[-1, 0]], dtype=np.float32))
    other.close()
    assert backend.vector_search(np.array([1, 0], dtype=np.float32), 1)[0][0] == ids[1]
    assert sorted(p.name for p in tmp_path.glob("knowledge.sqlite.vectors-*.npy")) != sidecars
    assert len(list(tmp_path.glob("knowledge.sqlite.vectors-*.npy"))) == 2  # old generation removed

    # A fresh process memory-maps the sidecar instead of reading every BLOB.
    fresh = SqliteBackend(db)
    assert fresh.vector_search(np.array([0, 1], dtype=np.float32), 2)[0][0] == ids[1]
    assert isinstance(fresh._cache._matrix, np.memmap)
    fresh.close()
    backend.close()


def test_sqlite_refuses_a_newer_schema_with_a_clear_error(tmp_path: Path) -> None:
    from arreio.engine.core.errors import UsageError

    db = tmp_path / "knowledge.sqlite"
    SqliteBackend(db).close()
    import sqlite3

    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(UsageError, match="newer"):
        SqliteBackend(db)


def test_not_a_database_is_a_usage_error(tmp_path: Path) -> None:
    from arreio.engine.core.errors import UsageError

    bad = tmp_path / "knowledge.sqlite"
    bad.write_text("this is not sqlite" * 100)
    with pytest.raises(UsageError, match="cannot open knowledge base"):
        SqliteBackend(bad)


def test_frozen_v1_database_still_opens_and_searches(tmp_path: Path) -> None:
    import shutil

    from tests.knowledge.conftest import FIXTURES

    db = tmp_path / "knowledge.sqlite"
    shutil.copy(FIXTURES / "v1" / "knowledge.sqlite", db)
    kb = KnowledgeBase(SqliteBackend(db), HashingEmbedder(dim=16))
    assert kb.backend.integrity_ok()
    assert [d.path for d in kb.backend.documents()] == ["docs/chinese.md", "docs/sqlite.md"]
    # Version 1 stored no sentence vectors: its chunk vectors still search, and stats says a sync
    # brings the sentences in.
    assert kb.vectors_ready() and "made without sentence vectors: run `arreio kb sync`" in (kb.stats().notice or "")
    assert kb.search("倒排索引", k=1)[0].path == "docs/chinese.md"
    assert kb.embed_pending() == kb.backend.stats().chunks
    assert kb.vectors_ready() and kb.stats().notice is None
    assert kb.search("倒排索引", k=1)[0].path == "docs/chinese.md"
    assert kb.search("write-ahead logging", k=1)[0].path == "docs/sqlite.md"
    assert kb.search("write-ahead logging", k=1, mode="vector")
    kb.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_sentence_search_ranks_chunks_by_their_best_sentence(kind: str, tmp_path: Path) -> None:
    backend = make_backend(kind, tmp_path)
    backend.replace_document("a.md", "h", 1, [Chunk("one", 1, 1), Chunk("two", 2, 2), Chunk("three", 3, 3)])
    ids = [i for i, _ in backend.pending_vectors(5)]
    diagonal = np.array([1, 1, 0], dtype=np.float32) / np.sqrt(2)
    chunk_vectors = np.stack([diagonal, np.array([0, 1, 0], dtype=np.float32), np.array([0, 0, 1], dtype=np.float32)])
    # The first chunk's average leans away from the query, but one of its sentences is the query;
    # the second has no sentences (one-sentence chunk: its own vector stands in).
    sentences = [
        np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32),
        None,
        np.array([[0, 0.6, 0.8], [0, 0, 1]], dtype=np.float32),
    ]
    backend.set_vectors("m", ids, chunk_vectors, sentences)
    query = np.array([1, 0, 0], dtype=np.float32)
    assert [i for i, _ in backend.vector_search(query, 3)][0] == ids[0]
    ranked = backend.sentence_search(query, 3)
    assert ranked[0][0] == ids[0] and ranked[0][1] == pytest.approx(1.0)  # its chunk vector says 0.71
    by_second = backend.sentence_search(np.array([0, 1, 0], dtype=np.float32), 3)
    assert [i for i, _ in by_second] == [ids[0], ids[1], ids[2]]  # 1.0 (a sentence), 1.0 (own vector), 0.6
    assert [round(s, 3) for _, s in by_second] == [1.0, 1.0, 0.6]
    if kind == "sqlite":
        assert len(list(tmp_path.glob("state/knowledge.sqlite.sentences-*.npy"))) == 2  # owners + matrix, cached
    backend.close()


def test_the_cached_matrices_hold_every_stored_vector_in_id_order(tmp_path: Path) -> None:
    """The sidecars are filled batch by batch (2,048 chunks at a time) into arrays made
    once; each row must still be its chunk's vector, and each sentence row its chunk's sentence."""
    from arreio.memory.knowledge.vector_cache import read_rows

    backend = SqliteBackend(tmp_path / "knowledge.sqlite")
    backend.replace_document("a.md", "h", 1, [Chunk(f"chunk {i}", i + 1, i + 1) for i in range(5000)])
    ids = [i for i, _ in backend.pending_vectors(5000)]
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((len(ids), 8), dtype=np.float32)
    # a chunk of one sentence has none (its vector stands in); others 2-4 sentence rows
    sentences = [None if i % 3 == 0 else rng.standard_normal((2 + i % 3, 8), dtype=np.float32) for i in range(len(ids))]
    backend.set_vectors("m", ids, vectors, sentences)
    chunk_ids, matrix = backend._load_matrix()
    assert chunk_ids.tolist() == sorted(ids) and np.array_equal(matrix, vectors[np.argsort(ids)])
    owners, rows = backend._load_sentence_matrix()
    expected = [
        (chunk_id, row)
        for chunk_id, vector, own in sorted(zip(ids, vectors, sentences), key=lambda t: t[0])
        for row in (vector[None] if own is None else own)
    ]
    assert owners.tolist() == [chunk_id for chunk_id, _ in expected]
    assert np.array_equal(rows, np.stack([row for _, row in expected]))
    with pytest.raises(ValueError, match="more vector rows"):
        read_rows([(1, vectors[:2].tobytes())], 1, 8)
    with pytest.raises(ValueError, match="fewer vector rows"):
        read_rows([(1, vectors[0].tobytes())], 2, 8)
    backend.close()

"""The fast paths of the knowledge base: what a chunk costs to embed (embedding.plan), the sentence
pass restricted to the other passes' candidates, paging through pending chunks, and embedding in
worker processes (a real spawned pool, with the hashing embedder)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arreio.memory.knowledge import embedding, sentences
from arreio.memory.knowledge.chunking import Chunk
from arreio.memory.knowledge.embedders import HashingEmbedder
from arreio.memory.knowledge.fusion import FusionConfig
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.sqlite_backend import SqliteBackend
from arreio.memory.knowledge.vector_cache import merged, ranked, rows_of
from tests.knowledge.conftest import make_backend


def test_a_chunk_is_one_passage_and_the_sentences_that_can_rank_it() -> None:
    prose = "Aphids hate garlic spray. Ladybirds eat aphids. Neem oil works too."
    job = embedding.plan(7, prose, True)
    assert job.chunk_id == 7 and job.texts == (prose, *sentences.split(prose)) and job.rows == (1, 2, 3)
    # One sentence: no sentence rows at all (its own vector ranks it).
    assert embedding.plan(1, "One line only, about compost heaps.", True) == embedding.Job(
        1, ("One line only, about compost heaps.",), ()
    )
    # A sentence that is nearly the whole chunk reuses the chunk's vector instead of a second embedding.
    long = "Setup and install. " + "The installer copies every file into the prefix and records what it wrote " * 4
    near = embedding.plan(2, long, True)
    assert len(sentences.split(long)) == 2 and near.rows[1] == 0 and len(near.texts) == 2
    vectors = np.arange(6, dtype=np.float32).reshape(2, 3)
    vector, matrix = embedding.assemble(near, vectors)
    assert vector.tolist() == [0, 1, 2] and matrix.tolist() == [[3, 4, 5], [0, 1, 2]]
    assert embedding.plan(3, prose, False).rows == ()  # sentence vectors off


def test_rows_of_reads_only_the_rows_of_the_chunks_asked_for() -> None:
    owners = np.array([2, 2, 5, 9, 9, 9], dtype=np.int64)
    matrix = np.arange(12, dtype=np.float32).reshape(6, 2)
    picked_owners, picked = rows_of(owners, matrix, [9, 2, 4])
    assert picked_owners.tolist() == [2, 2, 9, 9, 9] and picked[:, 0].tolist() == [0, 2, 6, 8, 10]
    assert rows_of(owners, matrix, [3])[1].shape == (0, 2)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_sentence_search_among_candidates_scores_only_those(kind: str, tmp_path: Path) -> None:
    backend = make_backend(kind, tmp_path)
    backend.replace_document("a.md", "h", 1, [Chunk("one", 1, 1), Chunk("two", 2, 2), Chunk("three", 3, 3)])
    ids = [i for i, _ in backend.pending_vectors(5)]
    eye = np.eye(3, dtype=np.float32)
    backend.set_vectors("m", ids, eye, [eye[[0, 1]], None, eye[[1, 2]]])
    query = np.array([0, 1, 0], dtype=np.float32)
    assert [i for i, _ in backend.sentence_search(query, 3)] == ids  # 1.0, 1.0, 1.0 in id order
    assert [i for i, _ in backend.sentence_search(query, 3, among=[ids[2], ids[0]])] == [ids[0], ids[2]]
    assert backend.sentence_search(query, 3, among=[]) == []
    # Paging through what still needs a vector.
    backend.replace_document("b.md", "h", 1, [Chunk("four", 1, 1), Chunk("five", 2, 2)])
    first, second = (i for i, _ in backend.pending_vectors(5))
    assert [i for i, _ in backend.pending_vectors(5, after=first)] == [second]
    backend.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_sentence_scores_of_two_parts_merge_into_those_of_the_whole(kind: str, tmp_path: Path) -> None:
    """What lets a search score the vector pass's candidates while the keyword pass still runs."""
    backend = make_backend(kind, tmp_path)
    backend.replace_document("a.md", "h", 1, [Chunk(str(i), i + 1, i + 1) for i in range(6)])
    ids = [i for i, _ in backend.pending_vectors(10)]
    rows = np.random.default_rng(3).standard_normal((6 + 3 * 6, 4)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    backend.set_vectors("m", ids, rows[:6], [rows[6 + 3 * i : 9 + 3 * i] if i % 2 else None for i in range(6)])
    query = rows[9]  # the first sentence of ids[1]
    whole = backend.sentence_scores(query, ids[1:] + [999])  # an id without vectors is skipped
    parts = merged(backend.sentence_scores(query, [ids[4], ids[1]]), backend.sentence_scores(query, ids[2:4] + ids[5:]))
    assert whole[0].tolist() == parts[0].tolist() == ids[1:]  # ascending by id
    assert np.array_equal(whole[1], parts[1]) and whole[1][0] == pytest.approx(1.0)  # ids[1]'s sentence is the query
    assert ranked(*whole, 3) == backend.sentence_search(query, 3, among=ids[1:])
    assert backend.sentence_scores(query, [])[0].tolist() == []
    backend.close()


def test_a_pool_as_wide_as_the_index_ranks_as_the_full_sentence_pass(tmp_path: Path, docs: Path) -> None:
    """With every chunk in the pool the restricted pass is the full one; with a pool of one the
    sentence pass still ranks the keyword hits (and only candidates)."""
    kb = KnowledgeBase(SqliteBackend(tmp_path / "kb.sqlite"), HashingEmbedder())
    kb.add(["."], docs)
    chunks = kb.backend.stats().chunks
    queries = ["aphids on roses", "write-ahead logging", "weather in Tokyo", "garden pests"]
    full = [[h.chunk_id for h in kb.search(q, k=5)] for q in queries]
    kb.fusion = FusionConfig(sentence_pool=chunks)
    assert [[h.chunk_id for h in kb.search(q, k=5)] for q in queries] == full
    kb.fusion = FusionConfig(sentence_pool=0)  # 0: every chunk, the old full scan
    assert [[h.chunk_id for h in kb.search(q, k=5)] for q in queries] == full
    kb.close()


class ForWorkerHashing(HashingEmbedder):
    """The hashing embedder, allowed into worker processes (as E5Embedder is)."""

    def for_worker(self) -> HashingEmbedder:
        return HashingEmbedder(self.dim)


@pytest.mark.slow
def test_worker_processes_store_the_same_vectors_as_one_process(tmp_path: Path, docs: Path) -> None:
    alone = KnowledgeBase(SqliteBackend(tmp_path / "one.sqlite"), HashingEmbedder(), batch_size=2, workers=1)
    pooled = KnowledgeBase(SqliteBackend(tmp_path / "two.sqlite"), ForWorkerHashing(), batch_size=2, workers=2)
    one, two = alone.add(["."], docs), pooled.add(["."], docs)
    assert one.embedded == two.embedded == alone.backend.stats().chunks and two.pending == 0
    query = HashingEmbedder().embed_query("aphids in the garden")
    for search in ("sentence_search", "vector_search"):
        mine, theirs = getattr(pooled.backend, search)(query, 10), getattr(alone.backend, search)(query, 10)
        assert [i for i, _ in mine] == [i for i, _ in theirs]
        assert [s for _, s in mine] == pytest.approx([s for _, s in theirs])
    alone.close(), pooled.close()


def test_progress_moves_with_every_chunk_from_the_start(tmp_path: Path, docs: Path) -> None:
    """An honest ETA needs a rate early: the bar appears at 0 and moves once per chunk, not per batch."""
    kb = KnowledgeBase(SqliteBackend(tmp_path / "kb.sqlite"), HashingEmbedder(), batch_size=4)
    seen: list[tuple[int, int]] = []
    kb.add(["."], docs, progress=lambda phase, done, total: seen.append((done, total)) if phase == "embed" else None)
    total = kb.backend.stats().chunks
    assert seen == [(n, total) for n in range(total + 1)]
    kb.close()


def test_jobs_go_to_the_model_in_batches_and_come_back_one_by_one_in_order() -> None:
    """Several chunks share a model call (the weights are read once for all of their texts); each
    job still gets exactly its own rows, in order, as if embedded alone."""
    prose = "Aphids hate garlic spray. Ladybirds eat aphids. Neem oil works too."
    jobs = [embedding.plan(i, f"{prose} Bed {i} of {i * 7} roses.", True) for i in range(9)]
    jobs.append(embedding.plan(9, "x" * 5_000, True))  # bigger than a batch: a batch of its own
    groups = list(embedding.batches(jobs, max_chars=400))
    assert [job for group in groups for job in group] == jobs and all(groups)
    assert all(sum(job.size for job in group) <= 400 or len(group) == 1 for group in groups)
    assert len(groups[0]) > 1 and groups[-1] == (jobs[-1],)
    # A small add is spread over every worker: at most `max_jobs` jobs a call, whatever their size.
    few = list(embedding.batches(jobs[:8], max_chars=1_000_000, max_jobs=2))
    assert [len(group) for group in few] == [2, 2, 2, 2] and [j for g in few for j in g] == jobs[:8]

    class Counting(HashingEmbedder):
        calls = 0

        def embed_passages(self, texts):
            Counting.calls += 1
            return super().embed_passages(texts)

    out = list(embedding.run(Counting(), iter(jobs), len(jobs), workers=1))
    assert [job for job, _ in out] == jobs
    assert Counting.calls < len(jobs)
    alone = HashingEmbedder()
    for job, vectors in out:
        assert np.array_equal(vectors, alone.embed_passages(list(job.texts)))


def test_the_search_matrices_are_built_when_an_add_ends_not_by_the_first_search(tmp_path: Path, docs: Path) -> None:
    backend = SqliteBackend(tmp_path / "kb.sqlite")
    kb = KnowledgeBase(backend, HashingEmbedder())
    assert backend._cache.sidecar_files() == []
    kb.add(["."], docs)
    built = backend._cache.sidecar_files() + backend._sentences.sidecar_files()
    assert len(built) == 4  # ids and matrix, for chunks and for sentences
    kb.search("aphids on roses", k=3)
    assert backend._cache.sidecar_files() + backend._sentences.sidecar_files() == built  # nothing rebuilt
    kb.close()

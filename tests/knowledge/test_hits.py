"""A search reads only the chunks its hits come from (relevance.pick): the hits must be exactly those
of fusing every candidate with every chunk read (fusion.fuse with its identity), in that order, also
when many chunks start on the same line, and a chunk removed after the passes is passed over, not a
missing hit. (The score a hit shows is its evidence's, relevance.py, not the fused one.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from arreio.memory.knowledge.backend import Hit
from arreio.memory.knowledge.chunking import Chunk
from arreio.memory.knowledge.embedders import HashingEmbedder
from arreio.memory.knowledge.fusion import fuse
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.relevance import Evidence, pick
from arreio.memory.knowledge.sqlite_backend import SqliteBackend

WORDS = "compost soil water tomato aphid mulch seed root leaf rain sun frost".split()


def every_chunk_read(kb: KnowledgeBase, query: str, k: int, top_k: int | None = None) -> list[Hit]:
    """The reference: fuse the passes' rankings (of `k` hits' search) with every candidate's record
    read first; `top_k` (default `k`) of them."""
    n = max(kb.fusion.per_pass, k)
    rankings = [[i for i, _ in kb.backend.keyword_search(query, n)]]
    vector = kb.embedder.embed_query(query)
    rankings.append([i for i, _ in kb.backend.vector_search(vector, n)])
    records = kb.backend.get_chunks({i for ranking in rankings for i in ranking})
    fused = fuse(
        rankings,
        [kb.fusion.keyword_weight, kb.fusion.vector_weight + kb.fusion.sentence_weight],
        k=kb.fusion.k,
        top_k=k if top_k is None else top_k,
        identity=lambda i: (records[i].path, records[i].start_line) if i in records else i,
    )
    return [
        Hit(records[i].path, records[i].start_line, records[i].end_line, score, records[i].text, i)
        for i, score in fused
    ]


@pytest.fixture
def kb(tmp_path: Path):
    made = KnowledgeBase(SqliteBackend(tmp_path / "knowledge.sqlite"), HashingEmbedder(), sentence_vectors=False)
    backend = made.backend
    for d in range(12):
        chunks = []
        for c in range(25):
            words = [WORDS[(d * 7 + c * 3 + j) % len(WORDS)] for j in range(9)]
            start = 1 if d % 3 == 0 else c * 4 + 1  # every third document: 25 chunks on line 1
            chunks.append(Chunk(" ".join(words), start, start + 3 + c))
        backend.replace_document(f"doc{d}.md", str(d), 0, chunks)
    made.embed_pending()
    assert made.vectors_ready()
    yield made
    made.close()


@pytest.mark.parametrize("k", [1, 3, 10, 40])
def test_the_hits_are_those_of_fusing_every_candidate(kb: KnowledgeBase, k: int) -> None:
    for query in ("compost", "soil water", "tomato aphid mulch", "rain sun frost leaf", "seed"):
        got = kb.search(query, k=k)
        where = [(hit.path, hit.start_line, hit.end_line, hit.text, hit.chunk_id) for hit in got]
        assert where == [(h.path, h.start_line, h.end_line, h.text, h.chunk_id) for h in every_chunk_read(kb, query, k)]
        assert all(0 <= hit.score <= 1 for hit in got)
        assert len(got) == min(k, len(every_chunk_read(kb, query, k, top_k=10**6))) and got
        assert len({(hit.path, hit.start_line) for hit in got}) == len(got)


def test_a_chunk_removed_after_the_passes_is_passed_over(kb: KnowledgeBase) -> None:
    ids = [hit.chunk_id for hit in kb.search("soil water", k=40)]

    def judge(ids, texts):
        return [Evidence(0.5, 0.5) for _ in ids]

    first = pick(kb.backend, ids, 5, judge, floor=0.0, scale=None)
    gone = first[0].chunk_id
    kb.backend.replace_document(first[0].path, "changed", 0, [Chunk("nothing alike", 900, 901)])
    again = pick(kb.backend, ids, 5, judge, floor=0.0, scale=None)
    assert len(again) == 5 and gone not in {hit.chunk_id for hit in again}


class LengthRecordingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.query_lengths: list[int] = []

    def embed_query(self, text: str, threads: int = 1):
        self.query_lengths.append(len(text))
        return super().embed_query(text)


def test_the_model_reads_at_most_the_start_of_a_long_query(tmp_path: Path) -> None:
    """A megabyte-long query (a model's runaway argument, a pasted file) is embedded by its first
    QUERY_EMBED_MAX_CHARS (the model embeds every character: minutes for a megabyte); the keyword
    pass still reads all of it."""
    from arreio.memory.knowledge.passes import QUERY_EMBED_MAX_CHARS

    embedder = LengthRecordingEmbedder()
    made = KnowledgeBase(SqliteBackend(tmp_path / "knowledge.sqlite"), embedder, sentence_vectors=False)
    made.backend.replace_document("notes.md", "1", 0, [Chunk("the axolotl regrows its limbs", 1, 1)])
    made.embed_pending()
    query = "filler " * 150_000 + "axolotl"
    hits = made.search(query, k=3)
    made.close()
    assert embedder.query_lengths == [QUERY_EMBED_MAX_CHARS]
    assert [hit.path for hit in hits] == ["notes.md"]  # found by its last word, past the cap

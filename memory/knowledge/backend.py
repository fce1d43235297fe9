"""The storage interface every knowledge-base backend keeps, and the records it deals in.

Two backends implement it: `SqliteBackend` (production, one file) and `MemoryBackend` (tests,
ephemeral use). Contract shared by both:
- a document is replaced whole (`replace_document`): its old chunks and their vectors go, the new
  chunks arrive without vectors; one atomic step.
- vectors are attached later, in batches (`pending_vectors` then `set_vectors`), each batch atomic,
  so an interrupted embedding run leaves a usable index and the next run carries on.
- a chunk's vectors are its own vector and, optionally, a matrix of its sentences' vectors (one row
  per sentence, see sentences.py); both are set together, in one step.
- vectors belong to one embedding model (`vector_model`); `reset_vectors` switches model and
  forgets the old vectors.
- searches return (chunk id, score) best first; higher score is better.
- chunk text is stored as the knowledge base gives it: redacted (index.py); `redact_stored` redacts
  what an older arreio stored as read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias

from arreio.memory.knowledge.chunking import Chunk

if TYPE_CHECKING:
    import numpy as np


# Per chunk, its sentence vectors (one row each), or None for a chunk of one sentence.
Sentences: TypeAlias = "Sequence[np.ndarray | None] | None"


def sentence_matrices(ids: Sequence[int], vectors: np.ndarray, sentences: Sentences) -> list[np.ndarray | None]:
    """`sentences` as a list with one entry per id (all None when not given); refuses a length
    mismatch, which would pair a chunk with another chunk's vectors."""
    matrices = list(sentences) if sentences is not None else [None] * len(ids)
    if not len(ids) == len(vectors) == len(matrices):
        raise ValueError("one vector (and one sentence matrix or None) per id")
    return matrices


@dataclass(frozen=True)
class DocumentRecord:
    path: str
    sha256: str
    size: int
    chunks: int


@dataclass(frozen=True)
class ChunkRecord:
    id: int
    path: str
    start_line: int
    end_line: int
    text: str


@dataclass(frozen=True)
class Hit:
    """One search result: where it is, how well it matches (0..1, see relevance.py), its text."""

    path: str
    start_line: int
    end_line: int
    score: float
    text: str
    chunk_id: int = 0
    similarity: float | None = None  # the evidence behind `score`: best cosine with the query (None: no vectors)
    coverage: float | None = None  # ... and the query's weighted share of terms it holds (None: not asked)

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


@dataclass(frozen=True)
class BackendStats:
    documents: int
    chunks: int
    vectors: int
    vector_model: str | None
    size_bytes: int


class KnowledgeBackend(Protocol):
    # True when `keyword_search` may run on another thread while the other methods are called
    # (one keyword search at a time): `KnowledgeBase.search` then runs it alongside the vector pass.
    concurrent_keyword_search: bool

    def get_document(self, path: str) -> DocumentRecord | None: ...

    def documents(self) -> list[DocumentRecord]: ...

    def replace_document(self, path: str, sha256: str, size: int, chunks: Sequence[Chunk]) -> None: ...

    def remove_document(self, path: str) -> bool: ...

    def redact_stored(self, redact: Callable[[str], str]) -> int:
        """Apply `redact` to every stored chunk whose text it changes (their vectors are dropped, to
        be made again), once: a store made by an arreio that kept text as read. How many changed."""
        ...

    def vector_model(self) -> str | None: ...

    def reset_vectors(self, model: str) -> None: ...

    def drop_sentence_vectors(self, model: str) -> None:
        """Forget the sentence vectors, keep the chunk vectors, now counted as `model`'s."""
        ...

    def pending_vectors(self, limit: int, after: int = 0) -> list[tuple[int, str]]:
        """Up to `limit` (chunk id, text) pairs with an id above `after` that have no vector yet,
        lowest id first."""
        ...

    def count_pending_vectors(self) -> int: ...

    def set_vectors(self, model: str, ids: Sequence[int], vectors: np.ndarray, sentences: Sentences = None) -> None:
        """`vectors[i]` is chunk `ids[i]`'s vector; `sentences[i]` (when given) its sentence
        matrix, or None for a chunk of one sentence."""
        ...

    def sentence_search(
        self, query_vector: np.ndarray, n: int, among: Iterable[int] | None = None
    ) -> list[tuple[int, float]]:
        """Chunks ranked by their best-matching sentence (a chunk of one sentence by its own
        vector): (chunk id, best similarity), best first. With `among`, only those chunks are
        scored (the other passes' candidates), and only their rows are read."""
        ...

    def sentence_scores(
        self, query_vector: np.ndarray, among: Iterable[int], helper: Executor | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The sentence pass's scores before ranking: the chunks of `among` that have vectors,
        ascending by id, and each one's best similarity; what `sentence_search` ranks. Scores of
        two disjoint sets, merged (vector_cache.merged), rank as the scores of their union, so a
        search can score one part while another pass is still finding the rest. `helper` as in
        `vector_search`."""
        ...

    def keyword_search(self, query: str, n: int) -> list[tuple[int, float]]: ...

    def term_coverage(self, query: str, texts: Sequence[str]) -> list[float]:
        """For each text, the share of the query's terms it holds, each weighted by its rarity in
        the index (coverage.py): 0..1, tokenised as the keyword pass tokenises."""
        ...

    def vector_search(
        self, query_vector: np.ndarray, n: int, helper: Executor | None = None
    ) -> list[tuple[int, float]]:
        """The `n` chunks nearest the query, best first. `helper` is a thread that may score part
        of the vectors when it is free (scan.py); the result is the same with or without it."""
        ...

    def get_chunks(self, ids: Sequence[int]) -> dict[int, ChunkRecord]: ...

    def stats(self) -> BackendStats: ...

    def close(self) -> None: ...

"""A pure in-memory backend for tests and throwaway use.

Keyword ranking is Okapi BM25 with FTS5's constants (k1 = 1.2, b = 0.75, idf floored at 1e-6) over
the same CJK-rewritten tokens, so on text without inflected English words it ranks as the SQLite
backend does (FTS5's porter stemming is not reproduced: "indexes" does not match "index" here).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from arreio.memory.knowledge import cjk, scan
from arreio.memory.knowledge.backend import BackendStats, ChunkRecord, DocumentRecord, Sentences, sentence_matrices
from arreio.memory.knowledge.chunking import Chunk
from arreio.memory.knowledge.coverage import idf, share
from arreio.memory.knowledge.vector_cache import best_per_id, top_n

if TYPE_CHECKING:
    import numpy as np

_K1 = 1.2
_B = 0.75


@dataclass
class _Stored:
    record: ChunkRecord
    terms: Counter[str]
    length: int
    vector: np.ndarray | None = None
    sentences: np.ndarray | None = None


@dataclass
class _Doc:
    sha256: str
    size: int
    chunk_ids: list[int] = field(default_factory=list)


class MemoryBackend:
    """See `backend.KnowledgeBackend` for the contract."""

    concurrent_keyword_search = False  # pure Python: a thread would only wait for the GIL

    def __init__(self) -> None:
        self._docs: dict[str, _Doc] = {}
        self._chunks: dict[int, _Stored] = {}
        self._next_id = 1
        self._model: str | None = None

    def get_document(self, path: str) -> DocumentRecord | None:
        doc = self._docs.get(path)
        return DocumentRecord(path, doc.sha256, doc.size, len(doc.chunk_ids)) if doc else None

    def documents(self) -> list[DocumentRecord]:
        return [r for r in (self.get_document(p) for p in sorted(self._docs)) if r is not None]

    def replace_document(self, path: str, sha256: str, size: int, chunks: Sequence[Chunk]) -> None:
        self.remove_document(path)
        doc = _Doc(sha256, size)
        for chunk in chunks:
            terms = cjk.tokens(cjk.rewrite(chunk.text))
            record = ChunkRecord(self._next_id, path, chunk.start_line, chunk.end_line, chunk.text)
            self._chunks[self._next_id] = _Stored(record, Counter(terms), len(terms))
            doc.chunk_ids.append(self._next_id)
            self._next_id += 1
        self._docs[path] = doc

    def remove_document(self, path: str) -> bool:
        doc = self._docs.pop(path, None)
        if doc is None:
            return False
        for chunk_id in doc.chunk_ids:
            del self._chunks[chunk_id]
        return True

    def redact_stored(self, redact: Callable[[str], str]) -> int:
        changed = 0
        for chunk_id, stored in list(self._chunks.items()):
            clean = redact(stored.record.text)
            if clean != stored.record.text:
                terms = cjk.tokens(cjk.rewrite(clean))
                record = ChunkRecord(
                    chunk_id, stored.record.path, stored.record.start_line, stored.record.end_line, clean
                )
                self._chunks[chunk_id] = _Stored(record, Counter(terms), len(terms))
                changed += 1
        return changed

    def vector_model(self) -> str | None:
        return self._model

    def reset_vectors(self, model: str) -> None:
        self._model = model
        for stored in self._chunks.values():
            stored.vector = stored.sentences = None

    def drop_sentence_vectors(self, model: str) -> None:
        self._model = model
        for stored in self._chunks.values():
            stored.sentences = None

    def pending_vectors(self, limit: int, after: int = 0) -> list[tuple[int, str]]:
        pending = [(i, s.record.text) for i, s in sorted(self._chunks.items()) if s.vector is None and i > after]
        return pending[:limit]

    def count_pending_vectors(self) -> int:
        return sum(1 for s in self._chunks.values() if s.vector is None)

    def set_vectors(self, model: str, ids: Sequence[int], vectors: np.ndarray, sentences: Sentences = None) -> None:
        import numpy as np

        matrices = sentence_matrices(ids, vectors, sentences)
        if self._model is None:
            self._model = model
        elif self._model != model:
            raise ValueError(f"vectors of {model} cannot join vectors of {self._model}; reset first")
        for chunk_id, vector, matrix in zip(ids, vectors, matrices, strict=True):
            if chunk_id in self._chunks:
                stored = self._chunks[chunk_id]
                stored.vector = np.asarray(vector, dtype=np.float32)
                stored.sentences = None if matrix is None else np.asarray(matrix, dtype=np.float32)

    def vector_search(
        self, query_vector: np.ndarray, n: int, helper: Executor | None = None
    ) -> list[tuple[int, float]]:
        import numpy as np

        have = [(i, s.vector) for i, s in sorted(self._chunks.items()) if s.vector is not None]
        have = [(i, v) for i, v in have if v is not None and v.shape[0] == len(query_vector)]
        if not have:
            return []
        ids = np.array([i for i, _ in have], dtype=np.int64)
        return top_n(ids, np.stack([v for _, v in have]), query_vector, n, helper=helper)

    def sentence_search(
        self, query_vector: np.ndarray, n: int, among: Iterable[int] | None = None
    ) -> list[tuple[int, float]]:
        owners, matrix = self._sentence_rows(len(query_vector), among)
        return top_n(owners, matrix, query_vector, n, grouped=True)

    def sentence_scores(
        self, query_vector: np.ndarray, among: Iterable[int], helper: Executor | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        owners, matrix = self._sentence_rows(len(query_vector), among)
        return best_per_id(owners, scan.scores(matrix, query_vector, helper))

    def _sentence_rows(self, dim: int, among: Iterable[int] | None) -> tuple[np.ndarray, np.ndarray]:
        """The sentence rows of the chunks in `among` (all: None), grouped by chunk in id order."""
        import numpy as np

        wanted = None if among is None else set(among)
        blocks = [
            (i, s.vector[None, :] if s.sentences is None else s.sentences)
            for i, s in sorted(self._chunks.items())
            if s.vector is not None and s.vector.shape[0] == dim and (wanted is None or i in wanted)
        ]
        if not blocks:
            return np.zeros(0, dtype=np.int64), np.zeros((0, dim), dtype=np.float32)
        owners = np.repeat(np.array([i for i, _ in blocks], dtype=np.int64), [len(m) for _, m in blocks])
        return owners, np.concatenate([m for _, m in blocks])

    def keyword_search(self, query: str, n: int) -> list[tuple[int, float]]:
        terms = cjk.query_terms(query)
        if not terms or not self._chunks:
            return []
        total = len(self._chunks)
        avg_len = sum(s.length for s in self._chunks.values()) / total or 1.0
        idf = {}
        for term in terms:
            hits = sum(1 for s in self._chunks.values() if term in s.terms)
            idf[term] = max(math.log((total - hits + 0.5) / (hits + 0.5)), 1e-6)
        scored = []
        for chunk_id, stored in self._chunks.items():
            score = 0.0
            matched = False
            norm = _K1 * (1 - _B + _B * stored.length / avg_len)
            for term in terms:
                tf = stored.terms.get(term, 0)
                if tf:
                    matched = True
                    score += idf[term] * tf * (_K1 + 1) / (tf + norm)
            if matched:
                scored.append((chunk_id, score))
        scored.sort(key=lambda kv: (-kv[1], kv[0]))
        return scored[:n]

    def term_coverage(self, query: str, texts: Sequence[str]) -> list[float]:
        terms = cjk.query_terms(query)
        rows = len(self._chunks)
        weights = {term: idf(rows, sum(1 for s in self._chunks.values() if term in s.terms)) for term in terms}
        return [share(terms, weights, cjk.tokens(cjk.rewrite(text))) for text in texts]

    def get_chunks(self, ids: Sequence[int]) -> dict[int, ChunkRecord]:
        return {i: self._chunks[i].record for i in ids if i in self._chunks}

    def stats(self) -> BackendStats:
        vectors = sum(1 for s in self._chunks.values() if s.vector is not None)
        return BackendStats(len(self._docs), len(self._chunks), vectors, self._model, 0)

    def close(self) -> None:
        pass

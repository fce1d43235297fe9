"""The production backend: one SQLite file (standard-library `sqlite3`).

Tables: `meta` (schema version, vector model, vector generation, full-text analyzer), `documents`,
`chunks` (text, line range, vector as a float32 BLOB or NULL while not yet embedded, and the
sentence vectors as one row-major float32 BLOB, NULL for a chunk of one sentence) and
`chunks_fts`, an FTS5 index over the CJK-rewritten chunk text (rowid = chunk id). Every change is
one transaction, so a process killed at any moment leaves the previous or the next consistent
state. The keyword pass ranks exactly as FTS5's bm25 would, computed faster by `bm25.py` from
FTS5's own tables (FTS5 ranks what that cannot do exactly). Vector search is exact brute force over
the matrices cached by `VectorCache` (one row per chunk, and one per sentence): this Python cannot
load SQLite extensions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from arreio.engine.core.errors import UsageError
from arreio.memory.knowledge import cjk, scan, segmenter
from arreio.memory.knowledge.backend import BackendStats, ChunkRecord, DocumentRecord, Sentences, sentence_matrices
from arreio.memory.knowledge.bm25 import Bm25Scorer
from arreio.memory.knowledge.chunking import Chunk
from arreio.memory.knowledge.coverage import SqliteCoverage
from arreio.memory.knowledge.sqlite_schema import SCHEMA, SCHEMA_VERSION, TOKENIZE
from arreio.memory.knowledge.vector_cache import VectorCache, best_per_id, read_rows, row_numbers, rows_of, top_n

if TYPE_CHECKING:
    import numpy as np


class SqliteBackend:
    """See `backend.KnowledgeBackend` for the contract. `path=":memory:"` works for throwaway use."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path) if str(path) != ":memory:" else None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # isolation_level=None: transactions are opened explicitly in `_tx`.
            self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.execute("PRAGMA busy_timeout = 5000")
            if self.path is not None:
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = FULL")
            self._migrate()
        except sqlite3.DatabaseError as error:
            raise UsageError(f"cannot open knowledge base {path}: {error}") from error
        self._cache = VectorCache(self.path)
        self._sentences = VectorCache(self.path, kind="sentences")
        self._keyword_db: sqlite3.Connection | None = None
        # A file database can give the keyword pass a connection of its own (see `_keyword_conn`);
        # a second connection to ":memory:" would be another, empty, database.
        self.concurrent_keyword_search = self.path is not None
        # Ranks the keyword pass as FTS5 would, only faster (bm25.py); None: FTS5 ranks every query.
        self.bm25: Bm25Scorer | None = Bm25Scorer("chunks_fts", TOKENIZE)
        self._coverage = SqliteCoverage("chunks_fts", TOKENIZE)

    # -- plumbing ---------------------------------------------------------------------------

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _migrate(self) -> None:
        with self._tx() as db:
            for statement in filter(None, (s.strip() for s in SCHEMA.split(";"))):
                db.execute(statement)
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                db.execute("INSERT INTO meta VALUES ('vec_generation', '0')")
                db.execute("INSERT INTO meta VALUES ('redacted', '1')")  # text is redacted before it is stored
            elif int(row[0]) > SCHEMA_VERSION:
                raise UsageError(
                    f"knowledge base schema {row[0]} is newer than this arreio understands "
                    f"({SCHEMA_VERSION}); upgrade arreio"
                )
            elif int(row[0]) < 2:
                # Version 1 had no sentence vectors. Its chunk vectors stay; they carry another
                # model name than the KnowledgeBase now asks for, so the next `kb add`/`kb sync`
                # re-embeds them with sentences (until then search is keyword-only, and says so).
                db.execute("ALTER TABLE chunks ADD COLUMN svec BLOB")
                db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
            self._match_analyzer(db)

    def _match_analyzer(self, db: sqlite3.Connection) -> None:
        """The full-text index holds text as one analyzer rewrote it (segmenter.py). Opened under
        another one (the `ja` extra installed or removed, an older index), it is rebuilt from the
        stored chunk text, so index and queries always agree."""
        analyzer = segmenter.current()[0]
        row = db.execute("SELECT value FROM meta WHERE key = 'fts_analyzer'").fetchone()
        if row is not None and row[0] == analyzer:
            return
        # No stamp: an index written before analyzers were recorded, by plain bigrams.
        if row is not None or analyzer != "cjk-bigrams":
            db.execute("DELETE FROM chunks_fts")
            db.executemany(
                "INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)",
                [
                    (chunk_id, cjk.rewrite(text))
                    for chunk_id, text in db.execute("SELECT id, text FROM chunks").fetchall()
                ],
            )
        db.execute("INSERT OR REPLACE INTO meta VALUES ('fts_analyzer', ?)", (analyzer,))

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @staticmethod
    def _bump_generation(db: sqlite3.Connection) -> None:
        db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vec_generation'")

    # -- documents --------------------------------------------------------------------------

    def get_document(self, path: str) -> DocumentRecord | None:
        row = self._db.execute(
            "SELECT d.path, d.sha256, d.size, (SELECT COUNT(*) FROM chunks c WHERE c.doc_id = d.id) "
            "FROM documents d WHERE d.path = ?",
            (path,),
        ).fetchone()
        return DocumentRecord(*row) if row else None

    def documents(self) -> list[DocumentRecord]:
        rows = self._db.execute(
            "SELECT d.path, d.sha256, d.size, COUNT(c.id) FROM documents d "
            "LEFT JOIN chunks c ON c.doc_id = d.id GROUP BY d.id ORDER BY d.path"
        ).fetchall()
        return [DocumentRecord(*row) for row in rows]

    def _delete_document(self, db: sqlite3.Connection, path: str) -> bool:
        row = db.execute("SELECT id FROM documents WHERE path = ?", (path,)).fetchone()
        if row is None:
            return False
        db.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE doc_id = ?)", (row[0],))
        had_vectors = db.execute(
            "SELECT 1 FROM chunks WHERE doc_id = ? AND vec IS NOT NULL LIMIT 1", (row[0],)
        ).fetchone()
        db.execute("DELETE FROM chunks WHERE doc_id = ?", (row[0],))
        db.execute("DELETE FROM documents WHERE id = ?", (row[0],))
        if had_vectors:
            self._bump_generation(db)
        return True

    def replace_document(self, path: str, sha256: str, size: int, chunks: Sequence[Chunk]) -> None:
        with self._tx() as db:
            self._delete_document(db, path)
            doc_id = db.execute(
                "INSERT INTO documents (path, sha256, size) VALUES (?, ?, ?)", (path, sha256, size)
            ).lastrowid
            for chunk in chunks:
                chunk_id = db.execute(
                    "INSERT INTO chunks (doc_id, start_line, end_line, text) VALUES (?, ?, ?, ?)",
                    (doc_id, chunk.start_line, chunk.end_line, chunk.text),
                ).lastrowid
                db.execute("INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)", (chunk_id, cjk.rewrite(chunk.text)))

    def remove_document(self, path: str) -> bool:
        with self._tx() as db:
            return self._delete_document(db, path)

    def redact_stored(self, redact: Callable[[str], str]) -> int:
        """Once per file: `redact` every chunk an older arreio stored as read. A changed chunk loses
        its vectors (made again from the new text); the old text is overwritten on disk (secure
        delete, the full-text index merged, the write-ahead log truncated), not merely unlinked."""
        if self._meta("redacted") == "1":
            return 0
        self._db.execute("PRAGMA secure_delete = ON")
        try:
            with self._tx() as db:
                changed = [
                    (clean, chunk_id)
                    for chunk_id, text in db.execute("SELECT id, text FROM chunks").fetchall()
                    if (clean := redact(text)) != text
                ]
                for clean, chunk_id in changed:
                    db.execute("UPDATE chunks SET text = ?, vec = NULL, svec = NULL WHERE id = ?", (clean, chunk_id))
                    db.execute("DELETE FROM chunks_fts WHERE rowid = ?", (chunk_id,))
                    db.execute("INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)", (chunk_id, cjk.rewrite(clean)))
                if changed:
                    db.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")
                    self._bump_generation(db)
                db.execute("INSERT OR REPLACE INTO meta VALUES ('redacted', '1')")
        finally:
            self._db.execute("PRAGMA secure_delete = OFF")
        if changed and self.path is not None:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return len(changed)

    # -- vectors ----------------------------------------------------------------------------

    def vector_model(self) -> str | None:
        return self._meta("vector_model")

    def reset_vectors(self, model: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE chunks SET vec = NULL, svec = NULL WHERE vec IS NOT NULL")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('vector_model', ?)", (model,))
            self._bump_generation(db)

    def drop_sentence_vectors(self, model: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE chunks SET svec = NULL WHERE svec IS NOT NULL")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('vector_model', ?)", (model,))
            self._bump_generation(db)

    def pending_vectors(self, limit: int, after: int = 0) -> list[tuple[int, str]]:
        return self._db.execute(
            "SELECT id, text FROM chunks WHERE vec IS NULL AND id > ? ORDER BY id LIMIT ?", (after, limit)
        ).fetchall()

    def count_pending_vectors(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM chunks WHERE vec IS NULL").fetchone()[0]

    def set_vectors(self, model: str, ids: Sequence[int], vectors: np.ndarray, sentences: Sentences = None) -> None:
        import numpy as np

        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        blobs = [
            None if m is None else np.ascontiguousarray(m, dtype=np.float32).tobytes()
            for m in sentence_matrices(ids, vectors, sentences)
        ]
        with self._tx() as db:
            current = db.execute("SELECT value FROM meta WHERE key = 'vector_model'").fetchone()
            if current is None:
                db.execute("INSERT INTO meta VALUES ('vector_model', ?)", (model,))
            elif current[0] != model:
                raise ValueError(f"vectors of {model} cannot join vectors of {current[0]}; reset first")
            db.executemany(
                "UPDATE chunks SET vec = ?, svec = ? WHERE id = ?",
                [(vectors[i].tobytes(), blobs[i], int(chunk_id)) for i, chunk_id in enumerate(ids)],
            )
            self._bump_generation(db)

    def _load_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        return self._read_vectors("vec", "length(vec)")

    def _load_sentence_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """Every chunk's sentence rows (or its own vector, for a chunk of one sentence), grouped by
        chunk id in id order; ids repeat once per row."""
        return self._read_vectors("coalesce(svec, vec)", "coalesce(length(svec), length(vec))")

    def _read_vectors(self, column: str, size: str) -> tuple[np.ndarray, np.ndarray]:
        """(ids, matrix) of `column`'s rows of every chunk with a vector, in id order, counted first
        (lengths only) and read in the same snapshot (`vector_cache.read_rows`)."""
        import numpy as np

        self._db.execute("BEGIN")
        try:
            chunks, total, width = self._db.execute(
                f"SELECT count(*), total({size}), max(length(vec)) FROM chunks WHERE vec IS NOT NULL"
            ).fetchone()
            if not chunks:
                return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
            rows = self._db.execute(f"SELECT id, {column} FROM chunks WHERE vec IS NOT NULL ORDER BY id")
            return read_rows(rows, int(total) // width, width // 4)
        finally:
            self._db.execute("COMMIT")

    def prepare_search(self) -> None:
        """Build the search matrices and their sidecars now, not in the first search (seconds at 100k chunks)."""
        generation = int(self._meta("vec_generation") or 0)
        self._cache.get(generation, self._load_matrix)
        self._sentences.get(generation, self._load_sentence_matrix)

    def vector_search(
        self, query_vector: np.ndarray, n: int, helper: Executor | None = None
    ) -> list[tuple[int, float]]:
        generation = int(self._meta("vec_generation") or 0)
        ids, matrix = self._cache.get(generation, self._load_matrix)
        if matrix.size == 0 or matrix.shape[1] != len(query_vector):
            return []
        return top_n(ids, matrix, query_vector, n, helper=helper)

    def sentence_search(
        self, query_vector: np.ndarray, n: int, among: Iterable[int] | None = None
    ) -> list[tuple[int, float]]:
        generation = int(self._meta("vec_generation") or 0)
        owners, matrix = self._sentences.get(generation, self._load_sentence_matrix)
        if matrix.size == 0 or matrix.shape[1] != len(query_vector):
            return []
        if among is not None:
            owners, matrix = rows_of(owners, matrix, among)
        return top_n(owners, matrix, query_vector, n, grouped=True)

    def sentence_scores(
        self, query_vector: np.ndarray, among: Iterable[int], helper: Executor | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        generation = int(self._meta("vec_generation") or 0)
        owners, matrix = self._sentences.get(generation, self._load_sentence_matrix)
        if matrix.size == 0 or matrix.shape[1] != len(query_vector):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        rows = row_numbers(owners, among)
        return best_per_id(owners[rows], scan.scores(matrix, query_vector, helper, rows))

    # -- search -----------------------------------------------------------------------------

    def _keyword_conn(self) -> sqlite3.Connection:
        """The keyword pass's own read connection (file databases): it runs on a worker thread
        while the query is embedded (index.py), and a connection serialises its users, so sharing
        one would make the vector pass wait. In WAL mode it reads the last committed state, as the
        main connection does outside a transaction. It also keeps the full-text pages it reads
        out of the main connection's page cache (and those of `get_chunks` out of its own)."""
        if not self.concurrent_keyword_search:
            return self._db
        if self._keyword_db is None:
            self._keyword_db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            self._keyword_db.execute("PRAGMA busy_timeout = 5000")
        return self._keyword_db

    def keyword_search(self, query: str, n: int) -> list[tuple[int, float]]:
        terms = cjk.query_terms(query)
        if not terms:
            return []
        db = self._keyword_conn()
        if self.bm25 is not None and (found := self.bm25.search(db, terms, n)) is not None:
            return found
        return self.fts5_keyword_search(query, n)

    def fts5_keyword_search(self, query: str, n: int) -> list[tuple[int, float]]:
        """The keyword pass ranked by FTS5 itself (what `bm25` must always agree with)."""
        match = cjk.fts_match(query)
        if match is None:
            return []
        rows = (
            self._keyword_conn()
            .execute("SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?", (match, n))
            .fetchall()
        )
        return [(row[0], -row[1]) for row in rows]  # FTS5's bm25 is "lower is better"

    def term_coverage(self, query: str, texts: Sequence[str]) -> list[float]:
        return self._coverage(self._db, query, texts)

    def get_chunks(self, ids: Sequence[int]) -> dict[int, ChunkRecord]:
        out: dict[int, ChunkRecord] = {}
        ids = list(ids)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for row in self._db.execute(
                f"SELECT c.id, d.path, c.start_line, c.end_line, c.text FROM chunks c "
                f"JOIN documents d ON d.id = c.doc_id WHERE c.id IN ({marks})",
                part,
            ):
                out[row[0]] = ChunkRecord(*row)
        return out

    def stats(self) -> BackendStats:
        documents = self._db.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        chunks, vectors = self._db.execute("SELECT COUNT(*), COUNT(vec) FROM chunks").fetchone()
        size = 0
        if self.path is not None:
            sidecars = [*self._cache.sidecar_files(), *self._sentences.sidecar_files()]
            for file in [self.path, *self.path.parent.glob(self.path.name + "-wal"), *sidecars]:
                if file.exists():
                    size += file.stat().st_size
        return BackendStats(documents, chunks, vectors, self.vector_model(), size)

    def integrity_ok(self) -> bool:
        """SQLite's own check plus FTS5's (which raises when the index and its rows disagree)."""
        ok = self._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        self._db.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('integrity-check')")
        return ok

    def close(self) -> None:
        if self.bm25 is not None:
            self.bm25.close()
        self._coverage.close()
        if self._keyword_db is not None:
            self._keyword_db.close()
            self._keyword_db = None
        self._db.close()

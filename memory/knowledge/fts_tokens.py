"""Texts cut into terms by an FTS5 tokenizer, the index's own (stemming and folding as the keyword
pass does), in a private in-memory table. Not thread-safe: its owner serialises calls."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence


class FtsTokens:
    """An in-memory FTS5 table with tokenizer `tokenize` (e.g. "porter unicode61"), made at first use."""

    def __init__(self, tokenize: str) -> None:
        self.tokenize = tokenize
        self._db: sqlite3.Connection | None = None

    def sequences(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """Each text's terms, in order."""
        found: list[list[tuple[int, str]]] = [[] for _ in texts]
        for term, doc, offset in self._instances(texts):
            found[doc].append((offset, term))
        return [tuple(term for _, term in sorted(pairs)) for pairs in found]

    def sets(self, texts: Sequence[str]) -> list[set[str]]:
        """Each text's distinct terms (no ordering work)."""
        found: list[set[str]] = [set() for _ in texts]
        for term, doc, _ in self._instances(texts):
            found[doc].add(term)
        return found

    def _instances(self, texts: Sequence[str]) -> Iterator[tuple[str, int, int]]:
        if self._db is None:
            self._db = sqlite3.connect(":memory:", check_same_thread=False)
            self._db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '{self.tokenize}')")
            self._db.execute("CREATE VIRTUAL TABLE t_instances USING fts5vocab(t, 'instance')")
        self._db.execute("DELETE FROM t")
        self._db.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", enumerate(texts))
        yield from self._db.execute("SELECT term, doc, offset FROM t_instances").fetchall()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

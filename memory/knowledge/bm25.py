"""The keyword pass's ranking: FTS5's own bm25, computed here over postings read from its index.

FTS5 answers `ORDER BY rank` by calling bm25() on every row that matches before sorting them. A query
with a common word ("a", "is", "of") matches most rows — ~68,000 of 100,000 chunks — and each call
reads its row's length from the `_docsize` table: ~90 ms, the slowest pass of a hybrid search.
BM25 is a sum, over the query's phrases, of a term that depends only on the phrase's count in the
row, the row's length and index-wide counts; so with each term's postings (row, count) and every
row's length at hand, the whole ranking is a few numpy operations (~1 ms).

The formula and its arithmetic are fts5_aux.c's (`fts5Bm25Function`), step for step in float64, so
the scores are bitwise FTS5's: idf = ln((N - n + 0.5) / (n + 0.5)), 1e-6 when that is ≤ 0 (n: rows
holding the phrase, N: rows), and score = Σ idf·f·(k1 + 1) / (f + k1·(1 - b + b·D/avgD)), added
phrase by phrase in query order (f: the phrase's count in the row, D: the row's tokens, avgD: all
tokens / N, k1 = 1.2, b = 0.75). FTS5 sorts by that score with SQLite's sorter, which is stable and
is fed the matches in rowid order, so equal scores come out by ascending rowid: so do ours. The test
suite compares hit lists and scores with FTS5's (tests/knowledge/test_bm25.py).

What it reads, all from FTS5's own tables (`fts5_index.c` documents the formats):
- N and the token total: the averages record (`<table>_data`, id 1), a list of varints;
- the index's state: the structure record (id 10), whose write counter grows with every change
  committed (each one flushes a new segment), so the two records together name one state;
- every row's length: `<table>_docsize`, one varint per column, loaded once per state;
- a term's postings: the `fts5vocab` 'instance' table (one row per occurrence), once per state and
  term, kept while the cache has room: common words recur in queries, and those are the costly ones;
- the query's tokens: an in-memory FTS5 table with the same tokenizer (porter stemming, diacritics).
Everything of one search is read in one read transaction, so it sees one state even while another
connection writes. Loading a state's row lengths takes ~40 ms at 100,000 rows, so the first search
of each state is left to FTS5 and the second loads them: a process that searches once (`arreio kb
search`) is never slower than FTS5 alone. `search` also answers None — the caller asks FTS5 — when
it cannot be exact (a query term that the tokenizer splits into several tokens: a phrase), for an
index smaller than `min_rows` (FTS5 is fast there, and numpy need not load), and without numpy.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from arreio.memory.knowledge.fts_tokens import FtsTokens

if TYPE_CHECKING:
    import numpy as np

K1 = 1.2  # fts5_aux.c's constants; the tests fail if either differs
B = 0.75
AVERAGES_ID, STRUCTURE_ID = 1, 10  # fts5_index.c: FTS5_AVERAGES_ROWID, FTS5_STRUCTURE_ROWID
# Below this many rows FTS5's own ranking takes a few ms even for the commonest words.
MIN_ROWS = 10_000
# Postings kept across searches (12 bytes each: row number and score contribution): 48 MB. At
# 100,000 chunks every term of the 300 benchmark queries together holds ~1.5 million.
MAX_CACHED_POSTINGS = 4_000_000
MAX_CACHED_TERMS = 4096  # query terms whose tokens are remembered


class _Inexact(Exception):
    """The index is not as this module reads it; FTS5 ranks instead."""


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    """SQLite's varint at `buf[i]` (big-endian, 7 bits a byte, the 9th byte whole): value, next i."""
    value = 0
    for j in range(i, min(i + 8, len(buf))):
        value = (value << 7) | (buf[j] & 0x7F)
        if buf[j] < 0x80:
            return value, j + 1
    if i + 8 >= len(buf):
        raise _Inexact("truncated varint")
    return (value << 8) | buf[i + 8], i + 9


def _varints(raw: np.ndarray) -> np.ndarray:
    """Every varint of a byte array of back-to-back varints, decoded at once. Token counts fit in
    4 bytes, so every varint ends in a byte below 0x80 (the 9-byte form never occurs)."""
    import numpy as np

    ends = np.flatnonzero(raw < 0x80)
    if len(ends) == 0 or ends[-1] != len(raw) - 1:
        raise _Inexact("truncated varint")
    starts = np.concatenate(([0], ends[:-1] + 1))
    lengths = ends - starts + 1
    values = np.zeros(len(ends), dtype=np.int64)
    for j in range(int(lengths.max())):
        more = lengths > j
        values[more] = (values[more] << 7) | (raw[starts[more] + j] & 0x7F)
    return values


@dataclass
class _State:
    """One state of the index: its rows, their length norms, and the postings read so far."""

    key: tuple[bytes, bytes]
    rows: int
    ids: np.ndarray  # every rowid, ascending
    norms: np.ndarray  # k1·(1 - b + b·D/avgD) of each row, as fts5_aux.c computes it
    postings: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=OrderedDict)
    cached: int = 0  # postings held in `postings`


def contributions(rows: int, tf: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Each row's share of the score for one phrase: its count `tf` in the rows that hold it, and
    those rows' norms; `rows` is N. The operations and their order are fts5_aux.c's."""
    df = len(tf)
    idf = math.log((rows - df + 0.5) / (df + 0.5))
    if idf <= 0.0:
        idf = 1e-6
    return idf * ((tf * (K1 + 1.0)) / (tf + norms))


def best(ids: np.ndarray, scores: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The `n` rows of highest score, best first, equal scores by ascending id (FTS5's order);
    a row scored 0 matched no phrase (every share is > 0)."""
    import numpy as np

    hit = np.flatnonzero(scores)
    found = scores[hit]
    if len(hit) > n > 0:
        threshold = np.partition(found, len(found) - n)[len(found) - n]
        keep = found >= threshold  # every tie of the n-th stays for the exact sort below
        hit, found = hit[keep], found[keep]
    order = np.lexsort((hit, -found))[: max(n, 0)]  # `ids` ascend, so row order is id order
    return list(zip(ids[hit[order]].tolist(), found[order].tolist()))


class Bm25Scorer:
    """FTS5's `ORDER BY rank` for OR-queries of quoted terms on the FTS5 table `table` (one
    column, made with `tokenize`). `search` takes the connection to read with; calls are
    serialised. Caches hold for one state of the index and are dropped when it changes."""

    def __init__(
        self,
        table: str,
        tokenize: str,
        *,
        min_rows: int = MIN_ROWS,
        max_cached_postings: int = MAX_CACHED_POSTINGS,
        fts5_searches: int = 1,
    ) -> None:
        self.table = table
        self.tokenize = tokenize
        self.min_rows = min_rows
        self.max_cached_postings = max_cached_postings
        self.fts5_searches = fts5_searches  # of each new state, before its caches are built
        self._state: _State | None = None
        self._unbuilt: tuple[tuple[bytes, bytes] | None, int] = (None, 0)  # a state not loaded, searches of it
        self._tokens: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._tokenizer = FtsTokens(tokenize)
        self._lock = threading.Lock()

    def search(self, db: sqlite3.Connection, terms: Sequence[str], n: int) -> list[tuple[int, float]] | None:
        """The `n` best rows for `"t1" OR "t2" OR …` (each term quoted as `cjk.fts_match` does),
        with their scores (FTS5's rank negated), or None when FTS5 must rank this one."""
        if not terms or n <= 0:
            return []
        with self._lock:
            db.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{self.table}_instances "
                f"USING fts5vocab(main, {self.table}, 'instance')"
            )
            db.execute("BEGIN")  # one snapshot for every read below
            try:
                return self._search(db, terms, n)
            except _Inexact:
                return None
            finally:
                db.execute("COMMIT")

    def _search(self, db: sqlite3.Connection, terms: Sequence[str], n: int) -> list[tuple[int, float]] | None:
        records = dict(
            db.execute(
                f"SELECT id, block FROM {self.table}_data WHERE id IN (?, ?)", (AVERAGES_ID, STRUCTURE_ID)
            ).fetchall()
        )
        averages, structure = records.get(AVERAGES_ID), records.get(STRUCTURE_ID)
        if averages is None or structure is None:
            return None  # a table never written to: FTS5 knows what that means
        rows, at = _varint(averages, 0)
        if rows < self.min_rows:
            return None
        key = (averages, structure)
        if self._state is None or self._state.key != key:
            seen = self._unbuilt[1] if self._unbuilt[0] == key else 0
            if seen < self.fts5_searches:
                self._unbuilt = (key, seen + 1)
                return None
        try:
            import numpy as np
        except ImportError:
            return None
        tokens = self._query_tokens(terms)
        if tokens is None:
            return None
        state = self._current(db, key, rows, _varint(averages, at)[0])
        scores = np.zeros(len(state.ids))
        for token in tokens:  # phrase by phrase, in query order, as fts5_aux.c adds them up
            rows_of, shares = self._postings(db, state, token)
            scores[rows_of] += shares
        return best(state.ids, scores, n)

    # -- per state --------------------------------------------------------------------------

    def _current(self, db: sqlite3.Connection, key: tuple[bytes, bytes], rows: int, tokens: int) -> _State:
        if self._state is not None and self._state.key == key:
            return self._state
        import numpy as np

        self._state = None  # the old state's caches go even if loading fails
        ids, sizes = db.execute(
            f"SELECT group_concat(id), group_concat(hex(sz), '') FROM {self.table}_docsize"
        ).fetchone()
        if ids is None:
            raise _Inexact("no rows")
        ids = np.fromstring(ids, dtype=np.int64, sep=",")
        lengths = _varints(np.frombuffer(bytes.fromhex(sizes), dtype=np.uint8)).astype(np.float64)
        if not rows == len(ids) == len(lengths) or np.any(ids[1:] <= ids[:-1]):
            raise _Inexact("docsize rows disagree with the averages record (not one column?)")
        avgdl = float(tokens) / float(rows)
        norms = K1 * ((1 - B) + (B * lengths) / avgdl)
        self._state = _State(key, rows, ids, norms)
        return self._state

    def _postings(self, db: sqlite3.Connection, state: _State, token: str) -> tuple[np.ndarray, np.ndarray]:
        """Row numbers (into `state.ids`) holding `token`, and their shares of the score."""
        cached = state.postings.get(token)
        if cached is not None:
            state.postings.move_to_end(token)
            return cached
        import numpy as np

        (docs,) = db.execute(
            f"SELECT group_concat(doc) FROM temp.{self.table}_instances WHERE term = ?", (token,)
        ).fetchone()
        docs = np.fromstring(docs, dtype=np.int64, sep=",") if docs else np.zeros(0, dtype=np.int64)
        if len(docs) > 1 and np.all(docs[1:] >= docs[:-1]):  # one run per row, in row order
            starts = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
            docs, tf = docs[starts], np.diff(np.append(starts, len(docs)))
        else:
            docs, tf = np.unique(docs, return_counts=True)
        where = np.searchsorted(state.ids, docs)
        if len(docs) and (where[-1] >= len(state.ids) or np.any(state.ids[where] != docs)):
            raise _Inexact("a posting of a row without a size")
        found = (where.astype(np.int32), contributions(state.rows, tf.astype(np.float64), state.norms[where]))
        if len(docs) <= self.max_cached_postings:
            while state.cached + len(docs) > self.max_cached_postings:
                state.cached -= len(state.postings.popitem(last=False)[1][0])
            state.postings[token] = found
            state.cached += len(docs)
        return found

    # -- query tokens -----------------------------------------------------------------------

    def _query_tokens(self, terms: Sequence[str]) -> list[str] | None:
        """Each term's one token as FTS5 makes it (stemmed, folded); None when a term is not one
        token: FTS5 would read it as a phrase of several, or of none."""
        missing = [t for t in dict.fromkeys(terms) if t not in self._tokens]
        if missing:
            for term, made in zip(missing, self._tokenize(missing)):
                self._tokens[term] = made
                if len(self._tokens) > MAX_CACHED_TERMS:
                    self._tokens.popitem(last=False)
        out = []
        for term in terms:
            made = self._tokens.get(term)
            if made is None:  # pushed out by the terms just added (a query of thousands)
                made = self._tokenize([term])[0]
            if len(made) != 1:
                return None
            out.append(made[0])
        return out

    def _tokenize(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        return self._tokenizer.sequences(texts)

    def close(self) -> None:
        self._tokenizer.close()
        self._state = None

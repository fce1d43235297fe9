"""Keyword evidence for a hit: how much of the query a passage holds, weighted by rarity.

BM25 scores rank the passages of one query but mean nothing across queries or collections (they
grow with the query's length and the collection's size), so a floor cannot be put on them. Coverage
can: the share of the query's terms, each weighted by its inverse document frequency, that occur
in the passage, in 0..1. A passage with every rare word of the query scores near 1; one that shares
only "how" and "to" with it scores near 0, however high BM25 puts it. The weight is Lucene's BM25
idf, ln(1 + (N - n + 0.5) / (n + 0.5)), which stays above 0 (FTS5's own idf is floored at 0 for a
term in more than half the rows: in a small collection every word would weigh nothing). A query
term found nowhere in the collection weighs the most: the passage lacks something the query asks for.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence

from arreio.memory.knowledge import cjk
from arreio.memory.knowledge.fts_tokens import FtsTokens


def idf(rows: int, holding: int) -> float:
    """The weight of a term found in `holding` of `rows` rows (see the module's docstring)."""
    return math.log(1.0 + (rows - holding + 0.5) / (holding + 0.5))


def share(query: Sequence[str], weights: Mapping[str, float], present: Iterable[str]) -> float:
    """The weighted share of the `query` tokens found among `present`; 0 for a query without any."""
    found = set(present)
    total = sum(weights[token] for token in query)
    if total <= 0:
        return 0.0
    return sum(weights[token] for token in query if token in found) / total


class SqliteCoverage:
    """Coverage over an FTS5 table: the query and the passages are tokenised by an in-memory FTS5
    table with the index's own tokenizer (stemming and folding as the keyword pass does), document
    frequencies come from the index's `fts5vocab` row table. Calls are serialised."""

    def __init__(self, table: str, tokenize: str) -> None:
        self.table = table
        self.tokenize = tokenize
        self._tokenizer = FtsTokens(tokenize)
        self._lock = threading.Lock()

    def __call__(self, db: sqlite3.Connection, query: str, texts: Sequence[str]) -> list[float]:
        terms = cjk.query_terms(query)
        if not terms or not texts:
            return [0.0] * len(texts)
        with self._lock:
            tokenized = self._tokenizer.sets([" ".join(terms), *(cjk.rewrite(text) for text in texts)])
            query_tokens = list(dict.fromkeys(tokenized[0]))
            if not query_tokens:
                return [0.0] * len(texts)
            db.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{self.table}_rows USING fts5vocab(main, {self.table}, 'row')"
            )
            marks = ",".join("?" * len(query_tokens))
            holding = dict(
                db.execute(f"SELECT term, doc FROM temp.{self.table}_rows WHERE term IN ({marks})", query_tokens)
            )
            (rows,) = db.execute(f"SELECT count(*) FROM {self.table}_docsize").fetchone()
        weights = {token: idf(rows, holding.get(token, 0)) for token in query_tokens}
        return [share(query_tokens, weights, present) for present in tokenized[1:]]

    def close(self) -> None:
        self._tokenizer.close()

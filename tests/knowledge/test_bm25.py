"""The keyword pass's own bm25 (bm25.py) must rank exactly as FTS5's `ORDER BY rank` does: the same
hits in the same order (ties included) with the same scores, on real text (English prose, code,
Chinese and Japanese bigrams, accented words, stemmed forms), and still after documents are added,
replaced and removed, by this connection or another. Real SQLite throughout."""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path

import pytest

pytest.importorskip("numpy")

from arreio.memory.knowledge import bm25, cjk  # noqa: E402
from arreio.memory.knowledge.chunking import Chunk, ChunkConfig, chunk_text  # noqa: E402
from arreio.memory.knowledge.sqlite_backend import SqliteBackend  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "fixtures" / "knowledge" / "docs"
# Accents, ligatures and umlauts: unicode61 folds them (remove_diacritics 2), so must the query.
ACCENTED = """Crème brûlée au café: a naïve façade in Zürich, São Paulo and Ærøskøbing.
Le café crème est servi à la terrasse; the cafe down the road serves cafés au lait.
Über die Brücke gehen Fußgänger; Œuvres complètes, déjà vu, jalapeño, piñata.
"""
QUERIES = [
    "sqlite",  # one term
    "the a of is",  # nothing but the commonest words: nearly every chunk matches
    "retry with exponential backoff and jitter on a 429",
    "gardening gardens gardener",  # stemming: one token, three phrases
    "retry retry RETRY retries",  # the same term again (query_terms keeps one) and its stem
    "café cafe CAFÉ",  # folded to one token
    "naïve facade zurich brulee",
    "向量检索",  # Chinese bigrams
    "全文検索エンジン 日本語",  # Japanese bigrams
    "北京 秋天 长城 sqlite",  # mixed scripts
    "platypus",  # matches nothing
    "write-ahead log (WAL) transactions",
    "session JSONL header version compaction tool result pairing",
    "exit code 130 cancelled",
    'quoted "terms" and under_scores',
]
NO_TERMS = ["", "   ", "!!!", "___", "—"]


def _always(backend: SqliteBackend) -> None:
    """The scorer on every search: at every index size, not only the large ones it is used for by
    default, and on the first search of each index state too (FTS5 ranks that one by default)."""
    assert backend.bm25 is not None
    backend.bm25.min_rows = 0
    backend.bm25.fts5_searches = 0


def _index(backend: SqliteBackend, path: str, text: str) -> None:
    chunks = chunk_text(text, ChunkConfig(max_chars=600, max_lines=12))
    backend.replace_document(path, hashlib.sha256(text.encode()).hexdigest(), len(text), chunks)


def _corpus() -> dict[str, str]:
    texts = {str(p.relative_to(DOCS)): p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*")) if p.is_file()}
    # The project's own prose (its README and user docs) as one long document
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    texts["README.md"] = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    texts["accented.txt"] = ACCENTED
    return texts


def _sampled_queries(texts: dict[str, str], count: int, seed: int) -> list[str]:
    """Windows of 1-12 words from the corpus itself: queries of every length that do match."""
    rng = random.Random(seed)
    words = [w for text in texts.values() for w in text.split()]
    out = []
    for _ in range(count):
        start = rng.randrange(len(words))
        out.append(" ".join(words[start : start + rng.randint(1, 12)]))
    return out


def _ours(backend: SqliteBackend, query: str, n: int) -> list[tuple[int, float]] | None:
    assert backend.bm25 is not None
    terms = cjk.query_terms(query)
    return backend.bm25.search(backend._keyword_conn(), terms, n) if terms else []


def assert_same_as_fts5(backend: SqliteBackend, queries: list[str], n: int = 50) -> None:
    for query in queries:
        expected = backend.fts5_keyword_search(query, n)
        ours = _ours(backend, query, n)
        assert ours is not None, f"fell back to FTS5 for {query!r}"
        assert [i for i, _ in ours] == [i for i, _ in expected], query
        assert [s for _, s in ours] == pytest.approx([s for _, s in expected], rel=1e-12, abs=0), query
        assert backend.keyword_search(query, n) == ours


@pytest.fixture
def backend(tmp_path: Path):
    made = SqliteBackend(tmp_path / "knowledge.sqlite")
    assert made.bm25 is not None
    _always(made)
    for path, text in _corpus().items():
        _index(made, path, text)
    yield made
    made.close()


def test_same_hits_and_scores_as_fts5_on_real_text(backend: SqliteBackend) -> None:
    assert backend.stats().chunks > 100
    assert_same_as_fts5(backend, QUERIES + _sampled_queries(_corpus(), 150, seed=23))
    assert_same_as_fts5(backend, QUERIES, n=3)  # a cut inside the ranking
    assert_same_as_fts5(backend, ["the a of is"], n=10_000)  # every hit


def test_queries_without_terms_find_nothing(backend: SqliteBackend) -> None:
    for query in NO_TERMS:
        assert backend.keyword_search(query, 10) == [] == backend.fts5_keyword_search(query, 10)


def test_equal_scores_come_in_fts5_order(tmp_path: Path) -> None:
    """Rows of the same length holding a term once score the same: FTS5 returns them by rowid.
    Over a thousand ties, cut at several places, in an index built over several transactions."""
    backend = SqliteBackend(tmp_path / "ties.sqlite")
    _always(backend)
    rng = random.Random(5)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    for d in range(60):
        chunks = [Chunk(" ".join(rng.choices(words, k=8)), line, line) for line in range(1, 31)]
        backend.replace_document(f"doc{d}", str(d), 0, chunks)
    for n in (1, 7, 50, 500, 5000):
        assert_same_as_fts5(backend, ["alpha", "alpha beta", "alpha omega", "kappa iota theta"], n)
    backend.close()


def test_stays_exact_after_adds_replacements_and_removals(backend: SqliteBackend, tmp_path: Path) -> None:
    queries = QUERIES + _sampled_queries(_corpus(), 40, seed=7)
    assert_same_as_fts5(backend, queries)  # the caches are warm from here on
    _index(backend, "new.md", "A new note about sqlite, compost, cafés and 向量检索.\n" * 5)
    assert_same_as_fts5(backend, queries)
    _index(backend, "sqlite.md", "SQLite, rewritten: nothing about logs any more.\n")  # replaced
    assert_same_as_fts5(backend, queries)
    assert backend.remove_document("README.md")
    assert_same_as_fts5(backend, queries)
    for path in [d.path for d in backend.documents()]:
        backend.remove_document(path)
    assert backend.keyword_search("sqlite", 10) == [] == backend.fts5_keyword_search("sqlite", 10)
    _index(backend, "back.md", "sqlite is back\n")
    assert_same_as_fts5(backend, ["sqlite", "back is"])


def test_sees_what_another_connection_wrote(backend: SqliteBackend) -> None:
    """The caches belong to one state of the index: a write by another process (here another
    backend on the same file) moves FTS5's structure record, and the next search reloads."""
    assert_same_as_fts5(backend, QUERIES)
    assert backend.path is not None
    other = SqliteBackend(backend.path)
    _index(other, "other.md", "sqlite sqlite sqlite from the other writer\n")
    other.remove_document("gardening.md")
    other.close()
    assert_same_as_fts5(backend, QUERIES)
    assert any(backend.get_chunks([i])[i].path == "other.md" for i, _ in backend.keyword_search("sqlite", 3))


def test_a_small_cache_changes_nothing(backend: SqliteBackend) -> None:
    assert backend.bm25 is not None
    backend.bm25.max_cached_postings = 50
    queries = QUERIES + _sampled_queries(_corpus(), 40, seed=11)
    assert_same_as_fts5(backend, queries)
    state = backend.bm25._state
    assert state is not None and state.cached <= 50


def test_a_term_fts5_splits_is_left_to_fts5(backend: SqliteBackend) -> None:
    """A quoted term that the tokenizer cuts in two is a phrase for FTS5: not scored here."""
    assert backend.bm25 is not None
    db = backend._keyword_conn()
    assert backend.bm25.search(db, ["write ahead"], 10) is None
    assert backend.bm25.search(db, ["...."], 10) is None  # no token at all
    assert backend.bm25.search(db, ["write", "ahead"], 10) is not None


def test_small_indexes_are_ranked_by_fts5(tmp_path: Path) -> None:
    """Below `min_rows` FTS5 is quick and numpy need not load: the scorer steps aside."""
    backend = SqliteBackend(tmp_path / "small.sqlite")
    _index(backend, "sqlite.md", (DOCS / "sqlite.md").read_text(encoding="utf-8"))
    assert backend.bm25 is not None and backend.stats().chunks < bm25.MIN_ROWS
    backend.bm25.fts5_searches = 0
    assert _ours(backend, "sqlite", 5) is None
    assert backend.keyword_search("sqlite wal", 5) == backend.fts5_keyword_search("sqlite wal", 5) != []
    backend.close()


def test_the_first_search_of_each_state_is_left_to_fts5(backend: SqliteBackend) -> None:
    """Loading a state costs more than FTS5's one search: a process that searches once never
    pays it. The second search of the same state loads it; a write starts over."""
    assert backend.bm25 is not None
    backend.bm25.fts5_searches = 1
    _index(backend, "new.md", "sqlite and compost\n")
    assert _ours(backend, "sqlite", 5) is None
    assert _ours(backend, "sqlite", 5) == backend.fts5_keyword_search("sqlite", 5)
    assert _ours(backend, "compost", 5) is not None  # loaded: from now on without FTS5
    backend.remove_document("new.md")
    assert _ours(backend, "sqlite", 5) is None
    assert backend.keyword_search("sqlite", 5) == backend.fts5_keyword_search("sqlite", 5)
    assert _ours(backend, "sqlite", 5) == backend.fts5_keyword_search("sqlite", 5)


@pytest.mark.parametrize(("name", "value"), [("K1", 1.3), ("B", 0.7)])
def test_another_k1_or_b_is_caught(backend: SqliteBackend, monkeypatch, name: str, value: float) -> None:
    """The comparison above is sharp enough to see a constant off by a little."""
    monkeypatch.setattr(bm25, name, value)
    assert backend.bm25 is not None
    backend.bm25._state = None  # the row norms were computed with the true constants
    with pytest.raises(AssertionError):
        assert_same_as_fts5(backend, QUERIES)


def test_varints_decode_as_sqlite_writes_them() -> None:
    import numpy as np

    values = [0, 1, 127, 128, 300, 16383, 16384, 2**21 - 1, 2**21, 2**28 + 5]
    encoded = b"".join(_encode(v) for v in values)
    assert bm25._varints(np.frombuffer(encoded, dtype=np.uint8)).tolist() == values
    at, decoded = 0, []
    while at < len(encoded):
        value, at = bm25._varint(encoded, at)
        decoded.append(value)
    assert decoded == values


def _encode(value: int) -> bytes:
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append(0x80 | (value & 0x7F))
        value >>= 7
    return bytes(reversed(groups))


def test_fts_match_and_query_terms_agree() -> None:
    """The scorer scores `query_terms`; FTS5 is asked `fts_match`: the same terms, quoted."""
    for query in QUERIES:
        terms = cjk.query_terms(query)
        assert cjk.fts_match(query) == " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        assert all(re.fullmatch(r"[^\W_]+", t) for t in terms)


def test_an_in_memory_database_too() -> None:
    """ ":memory:" has one connection for everything: the read transaction must not disturb it."""
    backend = SqliteBackend(":memory:")
    _always(backend)
    for path, text in _corpus().items():
        _index(backend, path, text)
    assert_same_as_fts5(backend, QUERIES)
    _index(backend, "more.md", "sqlite again\n")
    assert_same_as_fts5(backend, QUERIES)
    backend.close()

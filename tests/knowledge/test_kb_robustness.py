"""What a demanding user ran into: huge single-line files, form feeds, files that stop being text,
switching sentence vectors, and the knowledge section's edges."""

from __future__ import annotations

from pathlib import Path

import pytest

from arreio.engine.core.errors import ConfigError
from arreio.memory.knowledge.chunking import chunk_text
from arreio.memory.knowledge.fusion import fuse
from arreio.memory.knowledge.index import EMBED_MAX_CHARS, KnowledgeBase
from arreio.memory.knowledge.settings import parse_knowledge
from arreio.memory.knowledge.sqlite_backend import SqliteBackend
from tests.knowledge.conftest import CountingEmbedder


def test_the_embedder_reads_a_bounded_text_however_long_the_line(tmp_path: Path) -> None:
    kb = KnowledgeBase(SqliteBackend(tmp_path / "k.sqlite"), CountingEmbedder())
    words = " ".join(f"word{i}." for i in range(40_000)) + " platypus"  # one line, ~400 kB
    kb.add_text("huge.txt", words, "h")
    assert kb.embed_pending() == 1
    assert kb.embedder.embedded and max(len(t) for t in kb.embedder.embedded) <= EMBED_MAX_CHARS
    assert kb.search("platypus", k=1, mode="keyword")[0].path == "huge.txt"  # keywords see all of it
    kb.close()


def test_line_numbers_count_only_real_line_breaks() -> None:
    lines = [f"line {n}" for n in range(1, 61)]
    lines[9] = "page one\x0cpage two"  # a form feed, as in C and Python sources
    lines[19] = "a\u2028b"
    lines[29] = "c\x85d"
    lines[49] = "zebra"
    chunks = chunk_text("\n".join(lines) + "\n")
    zebra = next(c for c in chunks if "zebra" in c.text)
    assert zebra.start_line <= 50 <= zebra.end_line <= 60
    assert chunks[-1].end_line == 60


def test_a_file_that_stops_being_text_leaves_the_index(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("The backup generator is tested monthly.\n")
    kb = KnowledgeBase(SqliteBackend(tmp_path / "k.sqlite"), None)
    kb.add(["."], docs)
    (docs / "notes.md").write_bytes(b"old\x00binary")
    report = kb.sync()
    assert report.removed == 1 and any("no longer in the index" in n for n in report.notices)
    assert kb.search("backup generator", k=3) == []
    kb.close()


def test_switching_sentence_vectors_off_keeps_the_chunk_vectors(tmp_path: Path) -> None:
    db = tmp_path / "k.sqlite"
    with_sentences = KnowledgeBase(SqliteBackend(db), CountingEmbedder())
    with_sentences.add_text("a.md", "Aphids hate garlic. Ladybirds eat aphids. Neem oil helps.", "a")
    with_sentences.embed_pending()
    with_sentences.close()

    off = KnowledgeBase(SqliteBackend(db), CountingEmbedder(), sentence_vectors=False)
    assert off.vectors_ready()  # search keeps its vectors meanwhile
    assert off.search("ladybirds", k=1, mode="vector")[0].path == "a.md"
    assert "made with sentence vectors: run `arreio kb sync`" in (off.stats().notice or "")
    assert off.embed_pending() == 0 and off.embedder.embedded == []  # nothing embedded again
    assert off.backend.vector_model() == "hashing-256" and off.stats().notice is None
    off.close()

    on = KnowledgeBase(SqliteBackend(db), CountingEmbedder())
    assert "made without sentence vectors" in (on.stats().notice or "")
    assert on.embed_pending() == 1  # switching them on embeds the sentences (and the chunk again)
    assert on.backend.vector_model() == "hashing-256+sentences"
    on.close()


def test_a_perfect_hit_survives_min_score_one() -> None:
    fused = fuse([[1, 2], [1, 3]], [0.3, 0.7], k=60, min_score=1.0)
    assert [key for key, _ in fused] == [1]


@pytest.mark.parametrize(
    ("section", "named"),
    [
        ({"keyword_weight": float("inf")}, "finite"),
        ({"vector_weight": 0, "sentence_weight": 0, "keyword_weight": 0}, "must be above 0"),
        ({"rrf_k": True}, "valid integer"),
        ({"sentence_vectors": "yes"}, "valid boolean"),
    ],
)
def test_nonsense_settings_are_refused(section: dict, named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        parse_knowledge(section)

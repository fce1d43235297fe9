"""Sentence vectors: how a chunk is cut into sentences, how they are stored, and the pass that ranks
a chunk by its best sentence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arreio.memory.knowledge import sentences
from arreio.memory.knowledge.embedders import HashingEmbedder
from arreio.memory.knowledge.fusion import FusionConfig
from arreio.memory.knowledge.index import KnowledgeBase
from tests.knowledge.conftest import make_backend


def _letters(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_breaks_at_line_ends_and_sentence_punctuation() -> None:
    text = "Backups run nightly at two. They keep thirty days!\nRestores need the admin key?  Yes, always."
    assert sentences.split(text) == [
        "Backups run nightly at two.",
        "They keep thirty days!",
        "Restores need the admin key?",
        "Yes, always.",
    ]


def test_a_single_line_break_is_a_soft_wrap_but_a_list_item_or_heading_starts_anew() -> None:
    text = (
        "# Retries\n"
        "The client retries a failed call with exponential\n"
        "backoff, up to six attempts. It honours Retry-After.\n"
        "\n"
        "Defaults:\n"
        "- base delay one second\n"
        "1. cap of thirty seconds\n"
        "| attempts | 6 |\n"
    )
    assert sentences.split(text) == [
        "# Retries The client retries a failed call with exponential backoff, up to six attempts.",
        "It honours Retry-After.",
        "Defaults: - base delay one second",
        "1. cap of thirty seconds",
        "| attempts | 6 |",
    ]
    # A wrap between Latin and Japanese text joins with a space, between Japanese characters without.
    wrapped = "これはメインの openssh-client\nパッケージから分離されました。GTK+ に依存する必要がなく\nなりました。"
    assert sentences.split(wrapped) == [
        "これはメインの openssh-client パッケージから分離されました。",
        "GTK+ に依存する必要がなくなりました。",
    ]


def test_cjk_sentences_and_soft_wrapped_lines() -> None:
    # Japanese puts no space after 。 and a hard wrap cuts a word: the wrap is joined, 。 splits.
    text = "東京の天気は明日から雨になる予報です。傘を持って出か\nけましょう。"
    assert sentences.split(text) == ["東京の天気は明日から雨になる予報です。", "傘を持って出かけましょう。"]
    assert sentences.split("数据库使用预写日志。崩溃后可以恢复到一致的状态！") == [
        "数据库使用预写日志。",
        "崩溃后可以恢复到一致的状态！",
    ]


def test_short_pieces_join_the_next_and_no_text_is_lost() -> None:
    text = "## Setup\n* a\n* Install the package with pip and run the tests.\nDone.\n"
    pieces = sentences.split(text)
    assert pieces == ["## Setup * a", "* Install the package with pip and run the tests. Done."]
    assert all(len(p) >= sentences.MIN_CHARS for p in pieces)
    assert _letters("".join(pieces)) == _letters(text)


def test_a_chunk_of_one_sentence_has_no_sentence_vectors() -> None:
    assert sentences.split("One short line about retries.") == []
    assert sentences.split("Title\nA single sentence under a tiny title.") == []  # "Title" joins it
    assert sentences.split("") == []


def test_many_lines_are_joined_pairwise_down_to_the_cap() -> None:
    lines = [f"- item number {i:02d} of the list" for i in range(40)]
    pieces = sentences.split("\n".join(lines), max_pieces=12)
    assert 6 <= len(pieces) <= 12
    assert _letters("".join(pieces)) == _letters("".join(lines))  # order and every character kept


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_sentence_vectors_are_stored_with_their_chunk(kind: str, tmp_path: Path) -> None:
    kb = KnowledgeBase(make_backend(kind, tmp_path), HashingEmbedder())
    kb.add_text("a.md", "One line only, about compost heaps.", "h1")
    kb.add_text("b.md", "Aphids hate garlic spray. Ladybirds eat aphids. Neem oil works too.", "h2")
    assert kb.embed_pending() == 2
    chunk = {hit.path: hit.chunk_id for hit in kb.search("aphids compost", k=5, mode="keyword")}
    embed = kb.embedder.embed_passages
    three = embed(sentences.split("Aphids hate garlic spray. Ladybirds eat aphids. Neem oil works too."))
    assert three.shape == (3, kb.embedder.dim)
    for row in three:  # a sentence's own vector as the query: that chunk matches it exactly
        best = dict(kb.backend.sentence_search(row, 2))
        assert best[chunk["b.md"]] == pytest.approx(1.0, abs=1e-5) and best[chunk["a.md"]] < 0.99
    # A chunk of one sentence is ranked by its own vector.
    own = embed(["One line only, about compost heaps."])[0]
    assert dict(kb.backend.sentence_search(own, 2))[chunk["a.md"]] == pytest.approx(1.0, abs=1e-5)
    kb.close()


def _diluted_and_plain(kind: str, tmp_path: Path, *, sentence_vectors: bool) -> KnowledgeBase:
    """`long.md` says many things and, once, exactly what the query asks; `short.md` only shares
    one query word, but says little else."""
    filler = " ".join(
        f"The {word} report covers quarterly {word} figures for the northern region."
        for word in ("rail", "harbour", "timber", "cotton", "copper", "grain")
    )
    kb = KnowledgeBase(
        make_backend(kind, tmp_path),
        HashingEmbedder(dim=1024),
        fusion=FusionConfig(vector_weight=0.2, sentence_weight=0.4, keyword_weight=0.4),
        sentence_vectors=sentence_vectors,
    )
    kb.add_text("long.md", f"{filler}\nTomato blight needs copper fungicide spray.", "l")
    kb.add_text("short.md", "Tomato plants like sun.\nWater tomato plants daily.", "s")
    kb.embed_pending()
    return kb


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_best_sentence_lifts_a_chunk_whose_average_hides_the_match(kind: str, tmp_path: Path) -> None:
    query = "tomato blight fungicide"
    without = _diluted_and_plain(kind, tmp_path / "off", sentence_vectors=False)
    assert [h.path for h in without.search(query, k=2, mode="vector")] == ["short.md", "long.md"]
    with_sentences = _diluted_and_plain(kind, tmp_path / "on", sentence_vectors=True)
    assert with_sentences.vector_scheme == "hashing-1024+sentences"
    assert [h.path for h in with_sentences.search(query, k=2, mode="vector")] == ["long.md", "short.md"]
    without.close()
    with_sentences.close()

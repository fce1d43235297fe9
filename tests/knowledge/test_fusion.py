from __future__ import annotations

import pytest

from arreio.memory.knowledge.fusion import dedupe, fuse, normalise, rrf


def test_rrf_on_hand_made_rankings() -> None:
    fused = dict(rrf([["a", "b", "c"], ["b", "d"]], [1.0, 1.0], k=60))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)
    assert fused["d"] == pytest.approx(1 / 62)
    assert [key for key, _ in rrf([["a", "b", "c"], ["b", "d"]], k=60)] == ["b", "a", "d", "c"]


def test_weights_scale_each_pass() -> None:
    fused = dict(rrf([["x"], ["y"]], [0.6, 0.4], k=0))
    assert fused == {"x": pytest.approx(0.6), "y": pytest.approx(0.4)}


def test_a_key_repeated_in_one_ranking_counts_once_at_its_best_rank() -> None:
    assert dict(rrf([["a", "b", "a"]], k=60)) == {"a": pytest.approx(1 / 61), "b": pytest.approx(1 / 62)}


def test_ties_keep_first_seen_order() -> None:
    assert [key for key, _ in rrf([["p", "q"], ["q", "p"]], k=60)] == ["p", "q"]


def test_mismatched_weights_are_refused() -> None:
    with pytest.raises(ValueError):
        rrf([["a"]], [1.0, 2.0])


def test_normalise_puts_rank_one_everywhere_at_one() -> None:
    scores = dict(normalise(rrf([["a", "b"], ["a"]], [0.6, 0.4], k=60), [0.6, 0.4], k=60))
    assert scores["a"] == pytest.approx(1.0)
    assert scores["b"] == pytest.approx((0.6 / 62) / (1.0 / 61))


def test_dedupe_keeps_the_best_of_each_key() -> None:
    hits = [("doc1", 1, 0.9), ("doc2", 1, 0.8), ("doc1", 1, 0.7), ("doc1", 20, 0.6)]
    assert dedupe(hits, key=lambda h: (h[0], h[1])) == [("doc1", 1, 0.9), ("doc2", 1, 0.8), ("doc1", 20, 0.6)]


def test_fuse_dedupes_by_identity_applies_the_floor_and_top_k() -> None:
    where = {1: ("a.md", 1), 2: ("a.md", 1), 3: ("b.md", 5), 4: ("c.md", 1)}
    result = fuse([[1, 3, 4], [2, 3]], [1.0, 1.0], k=60, identity=where.get, min_score=0.0, top_k=10)
    assert [key for key, _ in result] == [3, 1, 4]  # 2 is the same (doc, line) as 1, ranked lower
    floored = fuse([[1, 3, 4], [2, 3]], [1.0, 1.0], k=60, identity=where.get, min_score=0.6, top_k=10)
    assert [key for key, _ in floored] == [3]  # 1 scores exactly 0.5 of the best possible
    assert [key for key, _ in fuse([[1, 3, 4]], [1.0], top_k=2)] == [1, 3]

"""Merging ranked lists: Reciprocal Rank Fusion, dedupe, a score floor, top-K. Pure functions.

RRF scores a candidate by its ranks alone, `score = sum_i w_i / (k + rank_i)` (rank from 1), so a
BM25 score and a cosine similarity never have to be put on one scale. Scores are then divided by the
best score possible (rank 1 in every pass that ran), which puts them in (0, 1]. They order the
hits; the score a hit shows, and the floor, are its evidence's (relevance.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from arreio.memory.knowledge.relevance import FLOOR

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


@dataclass(frozen=True)
class FusionConfig:
    """How the passes are merged. Three passes can run: the chunk vectors, the sentence vectors
    (chunks ranked by their best-matching sentence, see sentences.py) and the keyword index.
    Defaults favour semantics (0.6 of the weight, split between the two vector passes) over
    keywords (0.4); when a knowledge base has no sentence vectors, the sentence weight goes to the
    chunk-vector pass. `per_pass` candidates come from each pass; hits whose score (how well they
    match, relevance.py: 0..1) is below `min_score` are dropped (0: none). The sentence pass scores only the chunks
    that the keyword pass and the `sentence_pool` best chunk vectors put forward (0: every
    chunk): at 100,000 chunks a full pass reads ~500,000 sentence rows (768 MB) per query."""

    k: int = 60
    vector_weight: float = 0.3
    sentence_weight: float = 0.3
    keyword_weight: float = 0.4
    per_pass: int = 50
    min_score: float = FLOOR
    sentence_pool: int = 500

    def __post_init__(self) -> None:
        if self.k < 0 or self.per_pass < 1 or self.sentence_pool < 0:
            raise ValueError("k must be >= 0, per_pass >= 1 and sentence_pool >= 0")
        if min(self.vector_weight, self.sentence_weight, self.keyword_weight) < 0:
            raise ValueError("weights must be >= 0")


def rrf(rankings: Sequence[Sequence[K]], weights: Sequence[float] | None = None, k: int = 60) -> list[tuple[K, float]]:
    """Fused (key, score) pairs, best first. A key repeated within one ranking counts at its best
    rank only. Ties keep the order in which keys were first seen (pass order, then rank)."""
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[K, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[K] = set()
        for rank, key in enumerate(ranking, start=1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    order = {key: i for i, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def normalise(fused: Iterable[tuple[K, float]], weights: Sequence[float], k: int = 60) -> list[tuple[K, float]]:
    """Scores divided by the best possible fused score, so rank 1 everywhere is 1.0."""
    best = sum(weights) / (k + 1)
    if best <= 0:
        return [(key, 0.0) for key, _ in fused]
    return [(key, score / best) for key, score in fused]


def dedupe(items: Iterable[T], key: Callable[[T], Hashable]) -> list[T]:
    """Keep the first (best-ranked) item for each key, in order. Overlapping chunks of one document
    that start on the same line are one hit to the user."""
    seen: set[Hashable] = set()
    out = []
    for item in items:
        marker = key(item)
        if marker in seen:
            continue
        seen.add(marker)
        out.append(item)
    return out


def fuse(
    rankings: Sequence[Sequence[K]],
    weights: Sequence[float],
    *,
    k: int = 60,
    identity: Callable[[K], Hashable] | None = None,
    min_score: float = 0.0,
    top_k: int = 10,
) -> list[tuple[K, float]]:
    """The whole merge: RRF, normalise, dedupe by `identity` (default: the key), floor, top-K."""
    fused = normalise(rrf(rankings, weights, k), weights, k)
    ident = identity or (lambda key: key)
    unique = dedupe(fused, key=lambda kv: ident(kv[0]))
    # a hair of tolerance: rank 1 everywhere is 1.0 on paper, 0.9999999999999998 in floating point
    return [(key, score) for key, score in unique if score >= min_score - 1e-9][:top_k]

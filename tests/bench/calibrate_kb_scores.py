"""Calibrating the knowledge base's hit scores and floor (relevance.py), and measuring them.

    python tests/bench/calibrate_kb_scores.py [DATA_DIR] --workdir DIR [--langs en ja zh_CN]
                                              [--max-docs N] [--held-out]

DATA_DIR is the retrieval benchmark (bench_retrieval.py); each language is indexed through the real
`KnowledgeBase` + `SqliteBackend` + e5 embedder, into DIR (kept: a second run only searches).
`--max-docs N` indexes every query's relevant document plus a fixed sample of the others, N in all
(the e5 embedder takes ~1 s a document on a busy 2-core machine); `--no-index` searches what an
earlier run indexed (the documents that got their vectors, the others removed).

What it prints, per language and pooled:
- the evidence (best cosine, keyword coverage) of the relevant passages among each real query's
  first 20 hits, and of unrelated pairs (each query against random documents), as percentiles:
  the distributions the floor is put between;
- recall@10 and nDCG@10 of hybrid and keyword search with no floor (`min_score: 0`, the ranking
  arreio had before) and with the library's floor (the same search's hits, filtered as the floor
  filters them: it only leaves candidates out);
- the share of nonsense and off-topic queries (kb_offtopic_queries.json, the nonsense also by kind)
  that return nothing, on the 'dev' half, and with `--held-out` on the half kept aside too (for the
  final figure only); "before" is the floor without the lexical anchor (relevance.anchored);
- short honest queries made from the corpora (an identifier found in one document only, the first
  two words of a synopsis, a synopsis with a typo, another language's synopsis of a package whose
  document is indexed): how many find their document in the first 10 with the floor, with and
  without the anchor.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from bench_retrieval import REPO, index_corpus

from arreio.memory.knowledge import relevance
from arreio.memory.knowledge.embedders import E5Embedder
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.sqlite_backend import SqliteBackend

OFFTOPIC = Path(__file__).with_name("kb_offtopic_queries.json")
LANGS = ("en", "ja", "zh_CN")
QUANTILES = (0.5, 1, 2, 5, 10, 25, 50, 75, 90)


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {}
    return {f"p{q:g}": round(ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))], 4) for q in QUANTILES}


def split(queries: list[str]) -> tuple[list[str], list[str]]:
    """Every other query to 'dev', the rest kept aside ('held_out'): both halves mix languages."""
    return queries[0::2], queries[1::2]


def subset(corpus: dict, max_docs: int | None) -> list[dict]:
    docs = corpus["docs"]
    if not max_docs or max_docs >= len(docs):
        return docs
    wanted = {q["rel"] for q in corpus["queries"]}
    others = [d for d in docs if d["id"] not in wanted]
    random.Random(11).shuffle(others)
    return [d for d in docs if d["id"] in wanted] + others[: max(0, max_docs - len(wanted))]


def floored(hits: list, scale, floor: float, anchored: bool = True) -> list:
    """The hits a search with `floor` returns, from those of the same search with none: the first
    ones that pass it (the floor only leaves candidates out; the order is the ranking's); none for a
    query without a lexical anchor (`anchored`: relevance.anchored's answer)."""
    if not anchored:
        return []
    kept = []
    for hit in hits:
        evidence = relevance.Evidence(hit.similarity, hit.coverage)
        if relevance.passes(evidence, relevance.score(evidence, scale), floor, scale):
            kept.append(hit)
    return kept


def measure(kb: KnowledgeBase, corpus: dict, docs: list[dict]) -> tuple[dict, dict]:
    """recall@10 / nDCG@10 of hybrid and keyword search without and with the floor (one search of
    40 hits each, no floor, filtered as the floor would), and the evidence: the relevant passages'
    among those hits, and unrelated pairs' (5 random documents per query)."""
    totals: dict = {}
    raw: dict[str, list[float]] = {"rel_sim": [], "rel_cov": [], "rel_kw_cov": [], "other_sim": [], "other_cov": []}
    rng = random.Random(5)
    ids = {record.path: record.id for record in kb.backend.get_chunks(range(1, 10 * len(docs))).values()}
    for query in corpus["queries"]:
        scale = relevance.similarity_scale(kb.vector_scheme, query["text"])
        anchor = anchored(kb, query["text"], scale)
        for mode in ("hybrid", "keyword"):
            hits = kb.search(query["text"], k=40, mode=mode)
            for label, shown in (
                ("no_floor", hits),
                ("floor_no_anchor", floored(hits, scale, relevance.FLOOR)),
                ("floor", floored(hits, scale, relevance.FLOOR, anchor)),
            ):
                paths = [h.path for h in shown[:10]]
                got = totals.setdefault(label, {}).setdefault(mode, {"ndcg10": 0.0, "recall10": 0.0})
                if query["rel"] in paths:
                    got["ndcg10"] += 1 / math.log2(paths.index(query["rel"]) + 2)
                    got["recall10"] += 1
            for hit in hits[:20]:
                if hit.path == query["rel"]:
                    if mode == "hybrid":
                        raw["rel_sim"].append(hit.similarity)
                        raw["rel_cov"].append(hit.coverage)
                    else:
                        raw["rel_kw_cov"].append(hit.coverage)
        others = [d for d in rng.sample(docs, 6) if d["id"] != query["rel"]][:5]
        vector = kb.embedder.embed_query(query["text"])
        raw["other_sim"] += kb.backend.sentence_scores(vector, [ids[d["id"]] for d in others])[1].tolist()
        raw["other_cov"] += kb.backend.term_coverage(query["text"], [d["text"] for d in others])
    n = len(corpus["queries"])
    figures = {
        label: {mode: {k: round(v / n, 4) for k, v in got.items()} for mode, got in modes.items()}
        for label, modes in totals.items()
    }
    return figures, raw


def anchored(kb: KnowledgeBase, text: str, scale) -> bool:
    """relevance.anchored's answer for a hybrid search of `text` with the library's floor."""
    return relevance.anchored([i for i, _ in kb.backend.keyword_search(text, 1)], relevance.FLOOR, scale)


@contextmanager
def without_anchor() -> Iterator[None]:
    """Searches as they were before the lexical anchor: every query counts as anchored."""
    anchored_ = relevance.anchored
    relevance.anchored = lambda keyword_hits, floor, scale: True
    try:
        yield
    finally:
        relevance.anchored = anchored_


def offtopic(kb: KnowledgeBase, texts: list[str]) -> dict:
    """The best hit's evidence of each query (no floor), and the share answered with nothing: by
    hybrid and keyword search as they are, and by hybrid search with the floor but no anchor."""
    best_sim, best_cov, empty = [], [], {"hybrid": 0, "keyword": 0, "hybrid_no_anchor": 0}
    floored_fusion = kb.fusion
    for text in texts:
        for mode in ("hybrid", "keyword"):
            if not kb.search(text, k=10, mode=mode):
                empty[mode] += 1
        with without_anchor():
            empty["hybrid_no_anchor"] += not kb.search(text, k=10)
        kb.fusion = replace(floored_fusion, min_score=0.0)
        hits = kb.search(text, k=10)
        kb.fusion = floored_fusion
        best_sim.append(max((h.similarity or 0.0 for h in hits), default=0.0))
        best_cov.append(max((h.coverage or 0.0 for h in hits), default=0.0))
    return {
        "queries": len(texts),
        "nothing_hybrid": round(empty["hybrid"] / len(texts), 3),
        "nothing_hybrid_no_anchor": round(empty["hybrid_no_anchor"] / len(texts), 3),
        "nothing_keyword": round(empty["keyword"] / len(texts), 3),
        "best_sim": percentiles(best_sim),
        "best_cov": percentiles(best_cov),
    }


IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*[A-Za-z0-9]")


def honest(lang: str, corpora: dict[str, dict], docs: list[dict]) -> list[tuple[str, str, str]]:
    """(kind, query, relevant document) of short real queries that are easy to lose, made from the
    corpora: an identifier (a token with a digit, `_`, `.`, `-`, `+` or an inner capital) found in its
    document only; the first two words (4+ letters) of an English synopsis; the synopsis with two
    letters of its longest word swapped; another language's synopsis of a package indexed here."""
    texts = {d["id"]: d["text"] for d in docs}
    holding: dict[str, int] = {}
    for text in texts.values():
        for token in set(IDENTIFIER.findall(text)):
            holding[token] = holding.get(token, 0) + 1
    rng = random.Random(3)
    made = []
    for query in corpora[lang]["queries"]:
        if query["rel"] not in texts:
            continue
        names = [
            t
            for t in IDENTIFIER.findall(texts[query["rel"]])
            if holding[t] == 1 and re.search(r"[_.+\-0-9]|[a-z][A-Z]", t)
        ]
        if names:
            made.append(("identifier", names[0], query["rel"]))
        words = [w for w in re.findall(r"[A-Za-z]+", query["text"]) if len(w) > 3] if lang == "en" else []
        if len(words) >= 2:
            made.append(("two_words", " ".join(words[:2]), query["rel"]))
        if words:
            word = max(words, key=len)
            at = rng.randrange(1, len(word) - 2)
            typo = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
            made.append(("typo", query["text"].replace(word, typo, 1), query["rel"]))
    for other, corpus in corpora.items():
        if other != lang:
            made += [("cross_language", q["text"], q["rel"]) for q in corpus["queries"] if q["rel"] in texts]
    return made


def short_queries(kb: KnowledgeBase, queries: list[tuple[str, str, str]]) -> dict:
    """Per kind: how many find their document in the first 10 with the floor, without and with the anchor."""
    found: dict[str, dict[str, int]] = {}
    floor = kb.fusion
    kb.fusion = replace(floor, min_score=0.0)
    try:
        for kind, text, rel in queries:
            scale = relevance.similarity_scale(kb.vector_scheme, text)
            hits = kb.search(text, k=40)
            got = found.setdefault(kind, {"queries": 0, "found_no_anchor": 0, "found": 0})
            got["queries"] += 1
            got["found_no_anchor"] += rel in [h.path for h in floored(hits, scale, relevance.FLOOR)[:10]]
            shown = floored(hits, scale, relevance.FLOOR, anchored(kb, text, scale))
            got["found"] += rel in [h.path for h in shown[:10]]
    finally:
        kb.fusion = floor
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(REPO.parent / "shared" / "bench" / "retrieval"))
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--langs", nargs="+", default=list(LANGS))
    parser.add_argument("--max-docs", type=int, default=None)
    parser.add_argument("--held-out", action="store_true", help="also measure the off-topic queries kept aside")
    parser.add_argument("--no-index", action="store_true", help="search the index as it is, add nothing")
    parser.add_argument("--no-evidence", action="store_true", help="print no distributions (figures only)")
    args = parser.parse_args(argv)

    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    sets = json.loads(OFFTOPIC.read_text(encoding="utf-8"))
    halves = ("dev", "held_out") if args.held_out else ("dev",)
    kinds = {"nonsense": sets["nonsense"], "offtopic": sets["offtopic"], **sets["nonsense_by_kind"]}
    probes = {f"{kind}_{half}": split(texts)[i] for kind, texts in kinds.items() for i, half in enumerate(halves)}
    corpora = {lang: json.loads((Path(args.data) / f"{lang}.json").read_text(encoding="utf-8")) for lang in LANGS}
    report: dict = {
        "floor": relevance.FLOOR,
        "scales": {
            "similarity": {k: {g: v.__dict__ for g, v in by.items()} for k, by in relevance.SIMILARITY_SCALES.items()},
            "coverage": relevance.COVERAGE_SCALE.__dict__,
        },
        "languages": {},
    }
    pooled: dict[str, list[float]] = {}
    for lang in args.langs:
        corpus = corpora[lang]
        docs = subset(corpus, args.max_docs)
        name = lang if len(docs) == len(corpus["docs"]) else f"{lang}-{len(docs)}"
        kb = KnowledgeBase(SqliteBackend(workdir / f"{name}.sqlite"), E5Embedder())
        if args.no_index:  # the documents an earlier (interrupted, trimmed) run left in the index
            present = {document.path for document in kb.backend.documents()}
            docs = [d for d in docs if d["id"] in present]
        else:
            index_corpus(kb, docs)
        result: dict = {"docs": len(docs), "queries": len(corpus["queries"])}
        floor = kb.fusion
        kb.fusion = replace(floor, min_score=0.0)
        figures, raw = measure(kb, corpus, docs)
        kb.fusion = floor
        result.update(figures)
        if not args.no_evidence:
            for key, values in raw.items():
                pooled.setdefault(key, []).extend(values)
            result["evidence"] = {key: percentiles(values) for key, values in raw.items()}
        result["probes"] = {kind: offtopic(kb, texts) for kind, texts in probes.items()}
        result["short_queries"] = short_queries(kb, honest(lang, corpora, docs))
        report["languages"][lang] = result
        print(json.dumps({lang: result}, ensure_ascii=False, indent=1), flush=True)
        kb.close()
    if pooled:
        report["pooled"] = {key: percentiles(values) for key, values in pooled.items()}
        (workdir / f"evidence-{'-'.join(args.langs)}.json").write_text(json.dumps(pooled))
        print(json.dumps({"pooled": report["pooled"]}, indent=1))
    (workdir / ("report-held-out.json" if args.held_out else "report.json")).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

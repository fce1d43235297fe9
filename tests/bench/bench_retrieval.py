"""Retrieval benchmark for the knowledge base (a script, not a pytest test).

    python tests/bench/bench_retrieval.py [DATA_DIR] [--langs en ja zh_CN] [--workdir DIR]
                                          [--scale-chunks 100000] [--no-scale] [--repeat N]
                                          [--scale-only] [--passes] [--hits FILE]
                                          [--neighbour busy|bursty]

DATA_DIR (default: a `shared/bench/retrieval` folder beside the repository's own folder) holds `<lang>.json` files:
{"docs": [{"id", "text"}], "queries": [{"qid", "text", "rel"}]} with one relevant doc per query.
Each language is indexed through the real `KnowledgeBase` + `SqliteBackend` (documents stored
under their id as path) and scored with nDCG@10 and Recall@10 for keyword-only (BM25), vector-only
and hybrid (RRF). Also measured: indexing throughput with and without the embedder, query latency
(p50/p95) on the largest corpus and on a synthetic index of `--scale-chunks` chunks (random text
from the corpus vocabulary, random unit vectors: latency only, no quality). `--passes` also times
each pass inside the synthetic index's hybrid searches; `--hits` writes their hit lists, so two
versions of the code can be checked to return the same hits. `--neighbour` runs another process
beside the synthetic run: `busy` spins on one core the whole time, `bursty` spins 20 ms of every
40 (how searches fare when the machine is not theirs alone).

`--workdir` keeps the databases, so a second run skips indexing (the index is incremental);
throughput is only reported for a fresh index. Nothing here is tuned to the queries.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from arreio.memory.knowledge.embedders import E5Embedder
from arreio.memory.knowledge.fusion import FusionConfig
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.sqlite_backend import SqliteBackend

REPO = Path(__file__).resolve().parents[2]
MODES = ("keyword", "vector", "hybrid")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def index_corpus(kb: KnowledgeBase, docs: list[dict]) -> dict:
    before = kb.backend.stats().chunks
    start = time.perf_counter()
    for doc in docs:
        kb.add_text(doc["id"], doc["text"], hashlib.sha256(doc["text"].encode()).hexdigest())
    chunked = time.perf_counter() - start
    chunks = kb.backend.stats().chunks - before
    start = time.perf_counter()
    embedded = kb.embed_pending()
    embed_s = time.perf_counter() - start
    out = {"chunks": kb.backend.stats().chunks, "new_chunks": chunks, "embedded": embedded}
    if chunks:
        out["chunks_per_s_keyword_only"] = chunks / chunked
    if embedded and chunks:
        out["chunks_per_s_with_embedder"] = chunks / (chunked + embed_s)
    return out


def timed_search(kb: KnowledgeBase, text: str, mode: str, repeat: int) -> tuple[list, float]:
    """Hits and latency in ms; with `repeat` > 1 the fastest of the runs, which filters out the
    scheduling noise of a shared machine (the work per query is deterministic)."""
    best = float("inf")
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        hits = kb.search(text, k=10, mode=mode)
        best = min(best, (time.perf_counter() - start) * 1000)
    return hits, best


class PassTimer:
    """Stands in for a backend or an embedder and adds how long each call of the methods named
    took (ms) to `log[name]`: the per-pass figures of a hybrid search, inside the real search."""

    def __init__(self, inner, names: set[str], log: dict[str, list[float]]) -> None:
        self._inner, self._names, self._log = inner, names, log

    def __getattr__(self, name: str):
        attr = getattr(self._inner, name)
        if name not in self._names:
            return attr

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self._log.setdefault(name, []).append((time.perf_counter() - start) * 1000)

        return timed


PASSES = {"keyword_search", "vector_search", "sentence_search", "sentence_scores", "get_chunks"}


def hybrid_passes(kb: KnowledgeBase, queries: list[dict], repeat: int, hits_out: Path | None) -> dict:
    """Hybrid latency with each pass timed inside it (the fastest of `repeat` runs per query, for
    the whole search and for each pass); with `hits_out`, every query's hits are written there."""
    log: dict[str, list[float]] = {}
    timed = KnowledgeBase(
        PassTimer(kb.backend, PASSES, log),
        PassTimer(kb.embedder, {"embed_query"}, log),
        fusion=kb.fusion,
        sentence_vectors=kb.sentence_vectors,
    )
    best: dict[str, list[float]] = {}
    hits_by_query = {}
    for query in queries:
        runs: dict[str, list[float]] = {}
        for _ in range(max(1, repeat)):
            log.clear()
            start = time.perf_counter()
            hits = timed.search(query["text"], k=10)
            runs.setdefault("hybrid", []).append((time.perf_counter() - start) * 1000)
            for name, took in log.items():
                runs.setdefault(name, []).append(sum(took))
        for name, took in runs.items():
            best.setdefault(name, []).append(min(took))
        hits_by_query[query["text"]] = [[hit.chunk_id, hit.score] for hit in hits]
    if hits_out is not None:
        hits_out.write_text(json.dumps(hits_by_query))
    if timed._keyword_worker is not None:  # the backend itself stays open for `kb`
        timed._keyword_worker.shutdown()
    return {name: {"p50_ms": percentile(v, 50), "p95_ms": percentile(v, 95)} for name, v in best.items()}


def evaluate(kb: KnowledgeBase, queries: list[dict], mode: str, repeat: int = 1) -> dict:
    ndcg, recall, latencies = 0.0, 0.0, []
    for query in queries:
        hits, ms = timed_search(kb, query["text"], mode, repeat)
        latencies.append(ms)
        paths = [h.path for h in hits]
        if query["rel"] in paths[:10]:
            rank = paths.index(query["rel"]) + 1
            ndcg += 1 / math.log2(rank + 1)
            recall += 1
    n = len(queries)
    return {
        "ndcg10": ndcg / n,
        "recall10": recall / n,
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
    }


def build_synthetic(kb: KnowledgeBase, vocabulary: list[str], n_chunks: int) -> float:
    """Fill `kb` with `n_chunks` synthetic chunks, unless it holds them already (seconds taken; nan
    when skipped). Each chunk is five 12-word lines of Zipf-like words from `vocabulary` (as real text
    is); with an embedder, random unit vectors stand in for its chunk vectors and, with sentence
    vectors on, five sentence vectors each, as a real chunk of five sentences would have."""
    import numpy as np

    backend = kb.backend
    if backend.stats().chunks >= n_chunks:
        return float("nan")
    from arreio.memory.knowledge.chunking import Chunk

    rng = random.Random(7)
    weights = [1 / (i + 1) for i in range(len(vocabulary))]
    start = time.perf_counter()
    per_doc = 20
    for d in range(n_chunks // per_doc):
        chunks = []
        for c in range(per_doc):
            words = rng.choices(vocabulary, weights, k=60)
            chunks.append(Chunk("\n".join(" ".join(words[i : i + 12]) for i in range(0, 60, 12)), c * 5 + 1, c * 5 + 5))
        backend.replace_document(f"synthetic/{d}.txt", str(d), 0, chunks)
    build_s = time.perf_counter() - start
    if kb.embedder is not None:
        gen = np.random.default_rng(7)

        def unit(rows: int) -> np.ndarray:
            vectors = gen.standard_normal((rows, kb.embedder.dim), dtype=np.float32)
            return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

        backend.reset_vectors(kb.vector_scheme)
        while pending := backend.pending_vectors(5000):
            sentences = [unit(5) for _ in pending] if kb.sentence_vectors else None
            backend.set_vectors(kb.vector_scheme, [i for i, _ in pending], unit(len(pending)), sentences)
    return build_s


NEIGHBOURS = {
    "busy": "while True: pass",
    "bursty": "import time\nwhile True:\n    t = time.perf_counter()\n"
    "    while time.perf_counter() - t < 0.02: pass\n    time.sleep(0.02)",
}


@contextlib.contextmanager
def neighbour(kind: str | None):
    """Another process beside the block (NEIGHBOURS), killed after it."""
    if kind is None:
        yield
        return
    process = subprocess.Popen([sys.executable, "-c", NEIGHBOURS[kind]])
    try:
        time.sleep(0.3)
        yield
    finally:
        process.kill()
        process.wait()


def synthetic_scale(
    workdir: Path,
    vocabulary: list[str],
    queries: list[dict],
    n_chunks: int,
    embedder,
    repeat: int = 1,
    sentence_vectors: bool = True,
    fusion: FusionConfig = FusionConfig(),
    compare_full_pass: bool = False,
    passes: bool = False,
    hits_out: Path | None = None,
) -> dict:
    """Latency only, on an index `build_synthetic` fills."""
    db = workdir / f"synthetic-{n_chunks}{'' if sentence_vectors else '-nosent'}.sqlite"
    backend = SqliteBackend(db)
    kb = KnowledgeBase(backend, embedder, sentence_vectors=sentence_vectors, fusion=fusion)
    build_s = build_synthetic(kb, vocabulary, n_chunks)
    start = time.perf_counter()
    kb.search("warm up the vector cache", k=10)
    cold_ms = (time.perf_counter() - start) * 1000
    result = {"chunks": backend.stats().chunks, "build_keyword_s": build_s, "first_query_ms": cold_ms}
    for mode in ("keyword", "hybrid") if embedder else ("keyword",):
        lat = [timed_search(kb, query["text"], mode, repeat)[1] for query in queries]
        result[mode] = {"p50_ms": percentile(lat, 50), "p95_ms": percentile(lat, 95)}
    if embedder and (passes or hits_out):
        result["hybrid_passes"] = hybrid_passes(kb, queries, repeat, hits_out)
    if embedder and compare_full_pass:  # the pre-pool behaviour, same index, same run
        kb.fusion = replace(fusion, sentence_pool=0)
        lat = [timed_search(kb, query["text"], "hybrid", repeat)[1] for query in queries]
        result["hybrid_full_sentence_pass"] = {"p50_ms": percentile(lat, 50), "p95_ms": percentile(lat, 95)}
    kb.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(REPO.parent / "shared" / "bench" / "retrieval"))
    parser.add_argument("--langs", nargs="+", default=["en", "ja", "zh_CN"])
    parser.add_argument("--workdir", default=None, help="keep the databases here (default: a temp folder)")
    parser.add_argument("--scale-chunks", type=int, default=100_000)
    parser.add_argument("--no-scale", action="store_true")
    parser.add_argument(
        "--scale-only",
        action="store_true",
        help="only the synthetic latency run (vocabulary and queries from en.json, nothing embedded)",
    )
    parser.add_argument("--no-embedder", action="store_true", help="keyword-only run")
    parser.add_argument("--weights", default=None, help="vector,sentence,keyword RRF weights (default: the library's)")
    parser.add_argument("--no-sentences", action="store_true", help="no sentence vectors (chunk vectors only)")
    parser.add_argument("--repeat", type=int, default=1, help="time each query N times, keep the fastest")
    parser.add_argument(
        "--sentence-pool",
        type=int,
        default=None,
        help="chunks the sentence pass scores (default: the library's; 0: all, the exact full pass)",
    )
    parser.add_argument(
        "--compare-full-pass",
        action="store_true",
        help="also score hybrid with the full sentence pass (sentence_pool=0) on the same index",
    )
    parser.add_argument(
        "--passes", action="store_true", help="also time each pass inside the scale run's hybrid searches"
    )
    parser.add_argument("--hits", default=None, help="write the scale run's hybrid hits of every query here (JSON)")
    parser.add_argument(
        "--neighbour",
        choices=sorted(NEIGHBOURS),
        default=None,
        help="another process beside the synthetic run: busy (one core all the time) or bursty",
    )
    args = parser.parse_args(argv)

    data = Path(args.data)
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="arreio-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    embedder = None if args.no_embedder or not E5Embedder.available() else E5Embedder()
    fusion = FusionConfig()
    if args.weights:
        vw, sw, kw = (float(x) for x in args.weights.split(","))
        fusion = FusionConfig(vector_weight=vw, sentence_weight=sw, keyword_weight=kw)
    if args.sentence_pool is not None:
        fusion = replace(fusion, sentence_pool=args.sentence_pool)
    sentence_vectors = not args.no_sentences
    print(
        f"embedder: {embedder.name if embedder else 'none (keyword only)'}; sentence vectors: "
        f"{sentence_vectors}; fusion: {fusion}",
        flush=True,
    )
    report: dict = {
        "embedder": embedder.name if embedder else None,
        "sentence_vectors": sentence_vectors,
        "languages": {},
    }
    vocabulary: set[str] = set()
    if args.scale_only:
        corpus = json.loads((data / "en.json").read_text(encoding="utf-8"))
        vocabulary = {word for doc in corpus["docs"] for word in doc["text"].split()}
        scale_queries = corpus["queries"]
    for lang in [] if args.scale_only else args.langs:
        corpus = json.loads((data / f"{lang}.json").read_text(encoding="utf-8"))
        kb = KnowledgeBase(
            SqliteBackend(workdir / f"{lang}.sqlite"), embedder, fusion=fusion, sentence_vectors=sentence_vectors
        )
        indexing = index_corpus(kb, corpus["docs"])
        results = {"docs": len(corpus["docs"]), "queries": len(corpus["queries"]), "indexing": indexing}
        for mode in MODES if embedder else ("keyword",):
            results[mode] = evaluate(kb, corpus["queries"], mode, args.repeat)
        if embedder and args.compare_full_pass:
            kb.fusion = replace(fusion, sentence_pool=0)
            results["hybrid_full_sentence_pass"] = evaluate(kb, corpus["queries"], "hybrid", args.repeat)
            results["ndcg_delta_vs_full_pass"] = (
                results["hybrid"]["ndcg10"] - results["hybrid_full_sentence_pass"]["ndcg10"]
            )
            kb.fusion = fusion
        report["languages"][lang] = results
        print(json.dumps({lang: results}, indent=1), flush=True)
        if lang == "en":
            for doc in corpus["docs"]:
                vocabulary.update(doc["text"].split())
            scale_queries = corpus["queries"]
        kb.close()
    if not args.no_scale and vocabulary:
        with neighbour(args.neighbour):
            report["scale"] = synthetic_scale(
                workdir,
                sorted(vocabulary),
                scale_queries,
                args.scale_chunks,
                embedder,
                args.repeat,
                sentence_vectors,
                fusion,
                args.compare_full_pass,
                args.passes,
                Path(args.hits) if args.hits else None,
            )
        report["scale"]["neighbour"] = args.neighbour
        print(json.dumps({"scale": report["scale"]}, indent=1), flush=True)
    (workdir / "report.json").write_text(json.dumps(report, indent=1))
    print(f"report: {workdir / 'report.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

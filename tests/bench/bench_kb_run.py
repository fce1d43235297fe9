"""Benchmark (not a test): `kb_search` as a user meets it, inside `arreio run` with every feature wired.

    python tests/bench/bench_kb_run.py [DATA_DIR] [--chunks 100000] [--queries 100] [--workdir DIR]

A project whose knowledge base holds `--chunks` synthetic chunks (`bench_retrieval.build_synthetic`:
Zipf-like words of the English retrieval corpus, random unit vectors for the default embedder; kept in
`--workdir`, so a second run skips the build), a script of `--queries` `kb_search` calls (the corpus's
English queries, k = 5), then `arreio run --script … --json` as a subprocess. Each call is timed from
its `tool_start` to its `tool_end` event as the CLI streams them (the query's embedding, the three
passes, the snippets and the result's way through the harness). Prints p50 / p95 and the first call
(which also opens the index and loads the model).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

DATA = HERE.parents[2] / "shared" / "bench" / "retrieval"


def build_project(root: Path, data: Path, chunks: int, queries: int) -> Path:
    """The project folder (its `.arreio/knowledge.sqlite` filled once), GOAL.md and the script."""
    from bench_retrieval import build_synthetic

    from arreio.memory.knowledge.index import open_knowledge_base

    corpus = json.loads((data / "en.json").read_text(encoding="utf-8"))
    state = root / ".arreio"
    state.mkdir(parents=True, exist_ok=True)
    kb = open_knowledge_base(state)  # the default embedder and settings: what the run's tool opens
    try:
        vocabulary = sorted({word for doc in corpus["docs"] for word in doc["text"].split()})
        built = build_synthetic(kb, vocabulary, chunks)
        if built == built:  # not nan: built now
            print(f"built the {chunks:,}-chunk index in {built:.0f} s", flush=True)
    finally:
        kb.close()
    (state / "config.yaml").write_text(
        f"fsync: false\nmax_steps: {queries + 5}\ngovernance: {{max_tool_calls: {queries + 10}}}\n"
    )
    (root / "GOAL.md").write_text("# Look things up\n\nSearch the knowledge base for each question.\n")
    picked = [q["text"] for q in corpus["queries"][:queries]]
    replies = [
        {"text": "", "tool_calls": [{"name": "kb_search", "arguments": {"query": text, "k": 5}}]} for text in picked
    ]
    replies.append({"text": "Looked them all up."})
    script = root / "script.json"
    script.write_text(json.dumps({"replies": replies}) + "\n")
    return script


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DATA))
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--workdir", default=None, help="keep the project (and its index) here")
    args = parser.parse_args(argv)
    root = (
        Path(args.workdir) if args.workdir else Path(os.environ.get("TMPDIR", "/tmp")) / f"arreio-kb-run-{args.chunks}"
    )
    from bench_retrieval import percentile

    script = build_project(root, Path(args.data), args.chunks, args.queries)
    exe = Path(sys.executable).with_name("arreio")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARREIO_")}
    started: dict[str, float] = {}
    took: list[float] = []
    with subprocess.Popen(
        [str(exe), "run", "--goal", "GOAL.md", "--script", str(script), "--json"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdout is not None
        for line in iter(process.stdout.readline, b""):
            now = time.perf_counter()
            if not line.startswith((b'{"type":"tool_start"', b'{"type":"tool_end"')):
                continue
            event = json.loads(line)
            if event.get("name") != "kb_search":
                continue
            if event["type"] == "tool_start":
                started[event["call_id"]] = now
            elif event["call_id"] in started:
                took.append((now - started.pop(event["call_id"])) * 1000)
    if process.returncode != 0 or len(took) != args.queries:
        print(f"the run failed (exit {process.returncode}, {len(took)} of {args.queries} calls timed)")
        return 1
    rest = took[1:]
    print(
        f"kb_search in `arreio run`, {args.chunks:,} chunks, {len(rest)} calls after the first: "
        f"p50 {percentile(rest, 50):.1f} ms   p95 {percentile(rest, 95):.1f} ms   (first call {took[0]:.0f} ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How soon Ctrl-C stops `arreio kb add` (a script, not a pytest test: ≤ 1 s).

    python tests/bench/bench_kb_interrupt.py [--rounds 6]

Each round makes a fresh project of three prose guides (`tests/knowledge/interrupting.py`, the
documents the Ctrl-C test uses), starts a real `arreio kb add` with the e5 embedder, waits until a
vector is stored, lets it run a little more (a different delay each round, so the signal lands at
different points of a model call) and sends SIGINT. Both ways `kb add` embeds are measured: worker
processes (every core) and, pinned to one core with `taskset`, a thread. Prints each stop time
(signal → exit), the median and the worst per way, and checks each round's exit code (130) and, in
the last round, that the next `kb add` embeds only what is missing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.knowledge.interrupting import interrupt_kb_add, make_project, resume_kb_add, vectors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    ways = {"worker processes": []}
    if shutil.which("taskset"):
        ways["one core, a thread"] = ["taskset", "-c", str(min(os.sched_getaffinity(0)))]
    failures = 0
    for way, pin in ways.items():
        stops: list[float] = []
        for n in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix="arreio-kbint-") as folder:
                root = Path(folder)
                env = make_project(root)
                run = interrupt_kb_add(root, env, pin, after_s=0.1 + 0.9 * n / max(1, args.rounds - 1))
                ok = run.running and run.returncode == 130 and "Traceback" not in run.stderr
                if n == args.rounds - 1 and ok:
                    chunks, stored = vectors(root)
                    resumed = resume_kb_add(root, env)
                    ok = resumed.returncode == 0 and f'"embedded": {chunks - stored}' in resumed.stdout
                failures += not ok
                stops.append(run.stopped_s)
                print(
                    f"{way}: round {n + 1} stopped {run.stopped_s:.2f} s after SIGINT (exit {run.returncode})"
                    + ("" if ok else "  FAILED"),
                    flush=True,
                )
        print(
            f"{way}: median {statistics.median(stops):.2f} s, worst {max(stops):.2f} s over {len(stops)} rounds"
            f" (goal: <= 1 s)"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

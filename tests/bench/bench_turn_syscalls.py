"""Benchmark (not a test): the system calls one plain turn makes.

    python tests/bench/bench_turn_syscalls.py [--turn K]

Runs `bench_turns`' library workload (scripted turns, each reading one 2 KB file, every CLI
feature, fsync off) under `strace`, marks the `tool_end` of turn K and of turn K+1 with a write to
stderr, and counts the system calls between the two marks: everything the harness asks of the
kernel for one turn (the session's lines, the audit entry, the work log, the read itself, the event
loop's own). Prints each call's count and the total. Needs `strace` (Debian's package).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

_CALL = re.compile(r"^(?:\d+\s+)?([a-z_0-9]+)\(")


def child(turns: int, mark: int) -> None:
    """Under strace: the workload, with a marker written at the `tool_end` of turns `mark` and `mark + 1`."""
    import asyncio

    import bench_turns

    from arreio.cli.deps import pipeline_deps
    from arreio.engine.run.pipeline import run_pipeline

    with tempfile.TemporaryDirectory() as folder:
        options = bench_turns.library_options(Path(folder), turns)

        async def go() -> None:
            ends = 0
            async for event in run_pipeline(options, pipeline_deps()):
                if event.type == "tool_end":
                    ends += 1
                    if ends in (mark, mark + 1):
                        os.write(2, f"BENCH-MARK-{ends}\n".encode())

        asyncio.run(go())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turn", type=int, default=30, help="the turn counted (after K tool_ends)")
    args = parser.parse_args(argv)
    if shutil.which("strace") is None:
        print("strace is not installed (apt-get install strace)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace"
        subprocess.run(
            ["strace", "-f", "-o", str(trace), sys.executable, __file__, "--child", str(args.turn + 5), str(args.turn)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        lines = trace.read_text(errors="replace").splitlines()
    start = next(i for i, line in enumerate(lines) if f"BENCH-MARK-{args.turn}\\n" in line)
    end = next(i for i, line in enumerate(lines) if f"BENCH-MARK-{args.turn + 1}\\n" in line)
    calls = collections.Counter(m.group(1) for line in lines[start + 1 : end] if (m := _CALL.match(line)))
    print(f"system calls between the tool_end of turn {args.turn} and the next: {sum(calls.values())}")
    for name, count in calls.most_common():
        print(f"  {name:<12} {count}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(int(sys.argv[2]), int(sys.argv[3]))
    else:
        raise SystemExit(main())

"""Benchmark (not a test): `bench_turns`' workload counted in CPU instructions, tenth by tenth.

    python tests/bench/bench_turns_instructions.py [N] [--per-turn] [--keep DIR]

The development VM's speed swings by ±40% within minutes, so wall-clock ratios between two tenths of
one run (or two runs of two versions) say as much about the machine as about the code. Instructions
do not: this runs `bench_turns`' library workload (N scripted turns, default 1,000, every CLI feature,
fsync off) under valgrind's callgrind, counting only between the first `tool_end` and the last, and
dumping the count every tenth. Printed: millions of instructions per turn for each tenth, their mean,
and the worst tenth over the first. `--per-turn` dumps at every turn instead and also lists the turns
over 3x the median with what happened in them (a prune, a compaction, a full collection); `--keep
DIR` keeps callgrind's dumps there (`cg.<pid>.<k>`: the k-th turn or tenth), for `callgrind_annotate`
to say where one turn's instructions went. Needs
valgrind and a C compiler (for the five-line shim that lets Python switch callgrind's counting on
and off); takes a few minutes. Valgrind runs SHA-256 in software: a digest costs more here than on
a CPU with SHA instructions.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

SHIM = """#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_ZERO_STATS; }
void cg_dump(void) { CALLGRIND_DUMP_STATS; }
void cg_stop(void) { CALLGRIND_DUMP_STATS; CALLGRIND_STOP_INSTRUMENTATION; }
"""


def run_counted(turns: int, shim: str, per_turn: bool, notes_path: str) -> None:
    """The child, under callgrind: the workload, with counting switched on at the first tool_end
    and a dump at every tenth (every turn with `per_turn`; what each turn did goes to `notes_path`)."""
    import gc

    import bench_turns

    from arreio.cli.deps import pipeline_deps
    from arreio.engine.run.pipeline import run_pipeline

    cg = ctypes.CDLL(shim)
    every = 1 if per_turn else turns // 10
    notes: dict[int, list[str]] = {}
    collected: list[int] = []
    gc.callbacks.append(lambda phase, info: collected.append(info["generation"]) if phase == "stop" else None)
    with tempfile.TemporaryDirectory() as folder:
        options = bench_turns.library_options(Path(folder), turns)

        async def go() -> None:
            ends = 0
            async for event in run_pipeline(options, pipeline_deps()):
                if event.type == "compaction":
                    notes.setdefault(ends, []).append(event.kind)
                if event.type != "tool_end":
                    continue
                if any(collected):
                    notes.setdefault(ends, []).append("gc" + "".join(str(g) for g in collected if g))
                collected.clear()
                ends += 1
                if ends == 1:
                    cg.cg_start()
                elif ends == turns:
                    cg.cg_stop()
                elif ends % every == 1 or every == 1:
                    cg.cg_dump()

        asyncio.run(go())
    Path(notes_path).write_text(json.dumps(notes))


def main(argv: list[str]) -> None:
    per_turn = "--per-turn" in argv
    keep = argv[argv.index("--keep") + 1] if "--keep" in argv else None
    numbers = [a for a in argv if a.isdigit()]
    turns = int(numbers[0]) if numbers else 1000
    with tempfile.TemporaryDirectory() as folder:
        work = Path(keep) if keep else Path(folder)
        work.mkdir(parents=True, exist_ok=True)
        (work / "shim.c").write_text(SHIM)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(work / "shim.so"), str(work / "shim.c")], check=True)
        notes_path = work / "notes.json"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={work}/cg.%p",
                sys.executable,
                __file__,
                "--child",
                str(turns),
                str(work / "shim.so"),
                str(int(per_turn)),
                str(notes_path),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        counts = []
        for dump in sorted(work.glob("cg.*.*"), key=lambda p: int(p.suffix[1:])):
            text = dump.read_text(errors="replace")
            if "Trigger: Client Request" in text:
                counts.append(int(text.split("\nsummary: ", 1)[1].split("\n", 1)[0]))
        notes = {int(k): v for k, v in json.loads(notes_path.read_text()).items()}
    if per_turn:
        # counts[i]: from the (i+1)-th tool_end to the next, the turn whose work the notes put at i+1
        median = statistics.median(counts)
        print(f"median turn {median / 1e6:.2f} M instructions; turns over 3x the median:")
        for i, count in enumerate(counts):
            if count > 3 * median:
                print(f"  turn {i + 1:5d}  {count / 1e6:8.2f} M  {' + '.join(notes.get(i + 1, []))}")
        tenth = len(counts) // 10
        counts = [sum(counts[k * tenth : (k + 1) * tenth]) for k in range(10)]
    per = [c / (turns // 10) / 1e6 for c in counts]
    print("M instructions per turn, each tenth: " + " ".join(f"{p:.2f}" for p in per))
    print(
        f"mean {sum(per) / len(per):.2f}   first {per[0]:.2f}   last {per[-1]:.2f}   "
        f"worst {max(per):.2f} (tenth #{per.index(max(per)) + 1})   worst/first {max(per) / per[0]:.2f}"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        run_counted(int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1", sys.argv[5])
    else:
        main(sys.argv[1:])

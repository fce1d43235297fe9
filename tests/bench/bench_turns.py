"""Benchmark (not a test): the harness's own cost per turn over a long run.

    python tests/bench/bench_turns.py [N ...] [--cli] [--fsync] [--write] [--profile FILE]

A scripted model (free, instant) makes N turns, each reading one 2 KB file (`src/f<i>.txt`), then
answers. It runs through the real pipeline with every feature the CLI wires: the library
`run_pipeline` with `cli/deps.pipeline_deps()` (default), or `arreio run --script … --json` as a
subprocess (`--cli`). Config: `fsync: false` unless `--fsync`.

Per turn is the wall time between two consecutive `tool_end` events (the model answers at once, so
that gap is the harness: request, hooks, records, the tool, the session lines). Printed: the mean
per-turn time of the first and the last tenth of the turns, their ratio (flat means ~1), and the
run's total harness time (everything from `prepare` to `done`); then the median turn of the first
and last tenth, and the periodic work the means carry (compactions, batch prunes, full collections).
With `--fsync` it also counts the fsyncs a turn makes (library mode only: `os.fsync` is wrapped for the run).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Self

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

FILE_BYTES = 2048


def make_workspace(root: Path, turns: int, fsync: bool, tool: str = "read") -> tuple[Path, Path]:
    """The repo (N files of 2 KB), GOAL.md, the script, and the project config. Returns (goal, script).
    `tool`: "read" (each turn reads one file) or "write" (each turn writes a new 2 KB file, approved
    with --yes: the path a sensitive call takes, through the policy, approvals and checkpoints)."""
    src = root / "src"
    src.mkdir(parents=True)
    for i in range(turns):
        line = f"line of file {i}: the quick brown fox jumps over the lazy dog, again and again.\n"
        body = (line * (FILE_BYTES // len(line) + 1))[: FILE_BYTES - 1] + "\n"
        (src / f"f{i}.txt").write_text(body)
    goal = root / "GOAL.md"
    goal.write_text("# Read every file\n\nRead each file under src/ and say what it holds.\n")
    # JSON (a YAML list is read the same way, but ruamel takes seconds over 1,000 replies).
    if tool == "write":
        replies = [
            {
                "text": f"Writing file {i}.",
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": f"out/o{i}.txt", "content": (src / f"f{i}.txt").read_text()},
                    }
                ],
            }
            for i in range(turns)
        ]
    else:
        replies = [
            {
                "text": f"Reading file {i}.",
                "tool_calls": [{"name": "read_file", "arguments": {"path": f"src/f{i}.txt"}}],
            }
            for i in range(turns)
        ]
    replies.append({"text": "Every file holds the same sentence."})
    script = root / "script.json"
    script.write_text(json.dumps({"replies": replies}, indent=1) + "\n")
    state = root / ".arreio"
    state.mkdir()
    # Budgets off: the scripted model reports token usage, and N turns must all run.
    (state / "config.yaml").write_text(
        f"fsync: {'true' if fsync else 'false'}\nmax_steps: {turns + 5}\n"
        f"governance: {{max_tool_calls: {turns + 10}, max_total_tokens: null, max_cost_usd: null}}\n"
    )
    return goal, script


def summary(label: str, stamps: list[float], total: float, turns: int, cpu: float | None = None) -> dict[str, float]:
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    tenth = max(1, len(gaps) // 10)
    first, last = sum(gaps[:tenth]) / tenth, sum(gaps[-tenth:]) / tenth
    print(
        f"{label:<8} N={turns:>5}  first tenth {first * 1e3:8.2f} ms/turn   last tenth {last * 1e3:8.2f} ms/turn"
        f"   last/first {last / first:5.2f}   total {total:7.2f} s   mean {total / turns * 1e3:8.2f} ms/turn"
        + (f"   cpu {cpu:6.2f} s" if cpu is not None else "")
    )
    # The typical turn, and the periodic work (compaction, a batch prune, a full garbage collection)
    # that the tenths' means carry: turns over 5x the median, counted and summed.
    mid_first, mid_last = statistics.median(gaps[:tenth]), statistics.median(gaps[-tenth:])
    typical = statistics.median(gaps)
    periodic = [g for g in gaps if g > 5 * typical]
    print(
        f"{'':<8} median first tenth {mid_first * 1e3:.2f} ms/turn   last tenth {mid_last * 1e3:.2f} ms/turn   "
        f"periodic: {len(periodic)} turns over {5 * typical * 1e3:.1f} ms, {sum(periodic) * 1e3:.0f} ms in all"
    )
    # Which tenth is last is an accident of where the compaction cycle falls: the worst tenth says
    # more (a compaction and the prunes before it land in one tenth, the first tenth never prunes).
    tenths = [sum(gaps[i * tenth : (i + 1) * tenth]) / tenth for i in range(len(gaps) // tenth)]
    worst = max(range(len(tenths)), key=tenths.__getitem__)
    print(
        f"{'':<8} worst tenth #{worst + 1} {tenths[worst] * 1e3:.2f} ms/turn   worst/first {tenths[worst] / first:5.2f}"
    )
    return {
        "first_ms": first * 1e3,
        "last_ms": last * 1e3,
        "total_s": total,
        "worst_ms": tenths[worst] * 1e3,
        "median_first_ms": mid_first * 1e3,
        "median_last_ms": mid_last * 1e3,
    }


class FsyncCounter:
    """Counts `os.fsync` calls while installed (a bench seam, not a mock: the real call still runs)."""

    def __init__(self) -> None:
        self.count = 0
        self._real = os.fsync

    def __enter__(self) -> Self:
        def counting(fd: int) -> None:
            self.count += 1
            self._real(fd)

        os.fsync = counting
        return self

    def __exit__(self, *_: object) -> None:
        os.fsync = self._real


def library_options(root: Path, turns: int, fsync: bool = False, tool: str = "read") -> Any:
    """The workspace made in `root` and the `RunOptions` of its run through `run_pipeline` (the other
    library benchmarks run this same workload)."""
    from arreio.engine.run.pipeline import RunOptions

    goal, script = make_workspace(root, turns, fsync, tool)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARREIO_")}
    return RunOptions(goal_path=goal, script=script, cwd=root, env=env, yes=tool == "write")


def run_library(turns: int, fsync: bool, tool: str = "read") -> dict[str, float]:
    from arreio.cli.deps import pipeline_deps
    from arreio.engine.run.pipeline import run_pipeline

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        options = library_options(root, turns, fsync, tool)
        stamps: list[float] = []
        ends: list[int] = []
        verdict = ""

        async def go() -> None:
            nonlocal verdict
            async for event in run_pipeline(options, pipeline_deps()):
                if event.type == "tool_end":
                    stamps.append(time.perf_counter())
                    if counter is not None:
                        ends.append(counter.count)
                elif event.type == "done":
                    verdict = event.verdict

        counter = FsyncCounter() if fsync else None
        t0, c0 = time.perf_counter(), time.process_time()
        if counter is not None:
            with counter:
                asyncio.run(go())
        else:
            asyncio.run(go())
        total, cpu = time.perf_counter() - t0, time.process_time() - c0
        assert verdict == "success" and len(stamps) == turns, (verdict, len(stamps))
        out = summary("library", stamps, total, turns, cpu)
        if ends:
            per = [b - a for a, b in itertools.pairwise(ends)]
            out["fsyncs_per_turn"] = sum(per) / len(per)
            print(f"         fsyncs per turn: {out['fsyncs_per_turn']:.2f} (min {min(per)}, max {max(per)})")
        return out


def run_cli(turns: int, fsync: bool, tool: str = "read") -> dict[str, float]:
    exe = Path(sys.executable).with_name("arreio")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        goal, script = make_workspace(root, turns, fsync, tool)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARREIO_")}
        stamps: list[float] = []
        t0 = time.perf_counter()
        with subprocess.Popen(
            [
                str(exe),
                "run",
                "--goal",
                str(goal),
                "--script",
                str(script),
                "--json",
                *(["--yes"] if tool == "write" else []),
            ],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        ) as process:
            assert process.stdout is not None
            for line in iter(process.stdout.readline, b""):  # each event stamped as it arrives (flushed per event)
                if line.startswith(b'{"type":"tool_end"'):
                    stamps.append(time.perf_counter())
        total = time.perf_counter() - t0
        assert process.returncode == 0 and len(stamps) == turns, (process.returncode, len(stamps))
        return summary("cli", stamps, total, turns)


def main(argv: list[str]) -> None:
    cli, fsync = "--cli" in argv, "--fsync" in argv
    tool = "write" if "--write" in argv else "read"
    profile = argv[argv.index("--profile") + 1] if "--profile" in argv else None
    sizes = [int(a) for a in argv if a.isdigit()] or [10, 200, 1000]
    for turns in sizes:
        if profile:
            import cProfile

            cProfile.runctx(
                "run_library(turns, fsync, tool)", globals(), {"turns": turns, "fsync": fsync, "tool": tool}, profile
            )
        else:
            (run_cli if cli else run_library)(turns, fsync, tool)


if __name__ == "__main__":
    main(sys.argv[1:])

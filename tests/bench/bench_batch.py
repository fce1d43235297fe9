"""Batch figures for docs/benchmarks.md (a script, not a test: `python tests/bench/bench_batch.py [--ray]`).

1. Throughput: 20 offline tasks (scripted replies, a command gate) with `-j 1` and `-j 2`.
2. Per-attempt overhead of the batch machinery, two ways: against a bare `arreio run` of the same
   task (a fresh process each time: what a shell loop over tasks costs), and against the same run
   in an already-warm process (`run_pipeline` alone: the stricter figure — copy, setup, state
   folder, row, dispatch).
3. With `--ray`: the same 20 tasks through a local Ray runtime (started once, not counted).
4. Driver memory: peak RSS of the driver for 20 and for 200 tasks (it must stay flat).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "fixtures" / "batch" / "sample" / "tasks" / "fix-add"
GATE = "python3 -c 'import calc; assert calc.add(2, 3) == 5'"


def make_suite(root: Path, n: int) -> Path:
    tasks = root / "tasks"
    shutil.copytree(SAMPLE, tasks / "fix-add", dirs_exist_ok=True)
    lines = ["version: 1", "defaults: {max_steps: 10, timeout_s: 120}", "tasks:"]
    for i in range(n):
        lines += [
            f"  - id: t{i:03d}",
            "    goal: Make add() in calc.py add.",
            "    workdir: tasks/fix-add",
            f'    gates: [{{kind: command, command: "{GATE}"}}]',
            "    script: tasks/fix-add/replies.yaml",
        ]
    path = root / "suite.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARREIO_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    return env


def arreio() -> str:
    return str(Path(sys.executable).with_name("arreio"))


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def batch(cwd: Path, suite: Path, *args: str) -> tuple[float, dict, float, float]:
    """Wall time of `arreio batch`, its summary (`--json`'s last line), the CPU seconds it and its
    workers used, and its steady throughput (attempts/s between the first and the last to finish)."""
    t0, cpu0 = time.perf_counter(), cpu_of_children()
    out = subprocess.run(
        [arreio(), "batch", str(suite), "--json", *args],
        cwd=cwd,
        env=env_for(cwd / "home"),
        capture_output=True,
        text=True,
        check=False,
    )
    wall, cpu = time.perf_counter() - t0, cpu_of_children() - cpu0
    if out.returncode != 0:
        raise SystemExit(f"batch failed ({out.returncode}): {out.stderr[-500:]}")
    lines = [json.loads(line) for line in out.stdout.strip().splitlines()]
    from datetime import datetime

    ends = sorted(datetime.fromisoformat(r["ended_at"]).timestamp() for r in lines if r["type"] == "attempt")
    steady = (len(ends) - 2) / (ends[-1] - ends[1]) if len(ends) > 2 and ends[-1] > ends[1] else 0.0
    return wall, lines[-1], cpu, steady


def bare_runs(root: Path, n: int) -> float:
    """Mean wall time of `arreio run` (a fresh process) on the task, `n` times."""
    times = []
    for i in range(n):
        work = root / f"bare{i}"
        shutil.copytree(SAMPLE, work)
        plan = work / "plan.yaml"
        plan.write_text(
            json.dumps(
                {
                    "units": [{"id": "t", "goal": "Make add() in calc.py add."}],
                    "gates": [{"kind": "command", "command": GATE}],
                }
            )
        )
        t0 = time.perf_counter()
        subprocess.run(
            [arreio(), "run", "--plan", str(plan), "--script", str(work / "replies.yaml"), "--output", "text"],
            cwd=work,
            env=env_for(root / "home"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
        )
        times.append(time.perf_counter() - t0)
    return statistics.mean(times)


def warm_runs(root: Path, n: int) -> tuple[float, float]:
    """Mean wall and CPU time (gate processes included) of the same run in one warm process (after a
    first, untimed run)."""
    from arreio.cli.deps import pipeline_deps
    from arreio.engine.run.pipeline import RunOptions, run_to_end

    times, cpus = [], []
    for i in range(n + 1):
        work = root / f"warm{i}"
        shutil.copytree(SAMPLE, work)
        plan = work / "plan.yaml"
        plan.write_text(
            json.dumps(
                {
                    "units": [{"id": "t", "goal": "Make add() in calc.py add."}],
                    "gates": [{"kind": "command", "command": GATE}],
                }
            )
        )
        options = RunOptions(
            plan=plan,
            script=work / "replies.yaml",
            cwd=work,
            env={**env_for(root / "home"), "ARREIO_HOME": str(work / "state")},
        )
        t0, cpu0 = time.perf_counter(), time.process_time() + cpu_of_children()
        events = asyncio.run(run_to_end(options, pipeline_deps()))
        assert events[-1].verdict == "success", events[-1]
        if i:
            times.append(time.perf_counter() - t0)
            cpus.append(time.process_time() + cpu_of_children() - cpu0)
    return statistics.mean(times), statistics.mean(cpus)


def driver_rss(root: Path, n: int) -> float:
    """Peak RSS (MB) of a driver running `n` tasks (`-j 2`), read from its own rusage via a wrapper."""
    suite = make_suite(root / f"mem{n}", n)
    code = (
        "import resource, sys; from arreio.cli.app import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('RSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, "batch", str(suite), "-j", "2", "--json"],
        cwd=root,
        env=env_for(root / "home"),
        capture_output=True,
        text=True,
        check=False,
    )
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("RSS"))
    return int(line.split()[1]) / 1024


def main() -> None:
    use_ray = "--ray" in sys.argv
    n = 20
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        suite = make_suite(root / "suite", n)
        load = os.getloadavg()[0]
        print(f"machine: {os.cpu_count()} cores, load average {load:.2f} at start (other work shares them)")
        w1, s1, c1, steady1 = batch(root, suite, "-j", "1")
        w2, s2, c2, steady2 = batch(root, suite, "-j", "2")
        assert s1["passed"] == s2["passed"] == n
        print(f"{n} tasks  -j 1: {w1:6.2f} s wall ({n / w1:.2f} attempts/s; steady {steady1:.2f}/s), {c1:.2f} s CPU")
        print(f"{n} tasks  -j 2: {w2:6.2f} s wall ({n / w2:.2f} attempts/s; steady {steady2:.2f}/s), {c2:.2f} s CPU")
        print(
            f"  -j 2 / -j 1 throughput: {w1 / w2:.2f}× wall to wall, {steady2 / steady1 if steady1 else 0:.2f}× steady"
        )
        bare = bare_runs(root, 5)
        warm, warm_cpu = warm_runs(root, 10)
        per_attempt, cpu_per_attempt = w1 / n, c1 / n
        print(f"bare `arreio run` (fresh process): {bare * 1000:6.0f} ms per run")
        print(f"same run in a warm process:        {warm * 1000:6.0f} ms per run ({warm_cpu * 1000:.0f} ms CPU)")
        print(
            f"batch -j 1, per attempt:           {per_attempt * 1000:6.0f} ms wall, "
            f"{cpu_per_attempt * 1000:.0f} ms CPU (the driver's start and the workers' warm-up included)"
        )
        print(f"  overhead over a bare arreio run: {(per_attempt - bare) * 1000:+6.0f} ms per attempt (wall)")
        print(
            f"  overhead over a warm run:        {(per_attempt - warm) * 1000:+6.0f} ms wall, "
            f"{(cpu_per_attempt - warm_cpu) * 1000:+.0f} ms CPU per attempt"
        )
        mean_row = s1["duration_s"]["mean"]
        print(
            f"  inside the worker (row duration {mean_row * 1000:.0f} ms): "
            f"{(mean_row - warm) * 1000:+.0f} ms per attempt"
        )
        if use_ray:
            wr, sr, _, steady_r = batch(root, suite, "--ray")
            assert sr["passed"] == n
            print(
                f"{n} tasks  --ray (a local runtime started and stopped inside): {wr:6.2f} s wall; "
                f"steady {steady_r:.2f} attempts/s; row duration mean {sr['duration_s']['mean'] * 1000:.0f} ms "
                f"({(sr['duration_s']['mean'] - warm) * 1000:+.0f} ms over a warm run)"
            )
            if steady_r:
                print(
                    f"  per attempt at steady state through Ray: {1000 / steady_r:.0f} ms "
                    f"(local -j 2 steady: {1000 / steady2 if steady2 else 0:.0f} ms)"
                )
        small, big = driver_rss(root, 20), driver_rss(root, 200)
        print(f"driver peak RSS: {small:.0f} MB for 20 tasks, {big:.0f} MB for 200 tasks")
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"load average at end {os.getloadavg()[0]:.2f}; self rusage {rss_mb} MB")


if __name__ == "__main__":
    main()

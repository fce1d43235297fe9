"""Checkpoint speed on a generated tree (a script, not a test: `python tests/bench/bench_checkpoints.py`).

A 5,000-file tree (~50 MB, 50 folders, a few sizes) is checkpointed through the real store and
recorder, as a run's hook does it, and the figures are printed against their bars:

- the first checkpoint of a fresh tree                         ≤ 3 s
- a checkpoint when nothing changed (inside a run; a new run)   ≤ 30 ms
- a checkpoint after one file changed (an `after`, with diff)   ≤ 60 ms
- `undo` of a run that touched 100 files (plan + apply)         ≤ 1 s
- the offline quickstart through the real CLI, with and without checkpoints (first run, read-only
  run, warm run; medians)

`--files N` and `--mb M` change the tree; `--repeat R` the samples per figure (the median is shown).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: this checkout's arreio
from arreio.engine.checkpoints.index import CheckpointIndex
from arreio.engine.checkpoints.recorder import Recorder
from arreio.engine.checkpoints.restore import apply_undo, prepare_undo
from arreio.engine.checkpoints.store import ShadowRepo, find_git
from arreio.engine.core.ports import SystemClock

REPO = Path(__file__).resolve().parents[2]

WORDS = (
    "def return self value import class for in if else None True data path result items count index name "
    "text config error raise with open async await yield lambda print"
).split()


def make_tree(root: Path, files: int, total_mb: float) -> None:
    """`files` source-like text files in 500 folders; sizes cycle around the mean that gives `total_mb`."""
    rng = random.Random(7)
    mean = int(total_mb * 1024 * 1024 / files)
    sizes = [mean // 4, mean // 2, mean, mean * 3 // 2, mean * 2 - mean // 4]  # averages to `mean`
    for i in range(files):
        folder = root / f"pkg{i % 50:02d}" / f"mod{(i // 50) % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        size, out, n = sizes[i % len(sizes)], [f"# file {i}\n"], 0
        while n < size:
            text = "    " * rng.randrange(4) + " ".join(rng.choices(WORDS, k=rng.randrange(3, 12)))
            out.append(f"{text}  # {rng.getrandbits(32):08x}\n")
            n += len(out[-1])
        (folder / f"f{i:05d}.py").write_text("".join(out)[:size])
    # files older than the stat cache, as a real project's are (no "racily clean" re-reads)
    past = time.time() - 3600
    for path in root.rglob("*"):
        os.utime(path, (past, past))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def cpu_now() -> float:
    """CPU seconds of this process and its finished children (git): what the figure costs when the
    machine is not shared — wall time on a loaded machine also counts other people's work."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn, repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of `repeat` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), cpu_now()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(cpu_now() - c0)
    return statistics.median(walls), statistics.median(cpus)


def line(label: str, value: tuple[float, float], bar: float) -> None:
    wall, cpu = value
    mark = "ok" if wall <= bar else ("ok on CPU time (machine loaded)" if cpu <= bar else "MISSED")
    print(f"{label:<54} wall {ms(wall)}  cpu {ms(cpu)}   bar {ms(bar).strip():>10}  {mark}")


def bench_store(files: int, total_mb: float, repeat: int) -> None:
    git = find_git(os.environ)
    assert git, "git is needed"
    clock = SystemClock()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        t0 = time.perf_counter()
        make_tree(work, files, total_mb)
        size = sum(p.stat().st_size for p in work.rglob("*") if p.is_file())
        print(f"tree: {files} files, {size / 1048576:.1f} MB (generated in {time.perf_counter() - t0:.1f} s)")
        state = work / ".arreio"
        repo = ShadowRepo(state, work, git=git, max_file_bytes=10 << 20)
        index = CheckpointIndex(state)
        rec = Recorder(repo, index, clock, run_id="run-bench-1")
        line("first checkpoint of a fresh tree", timed(lambda: rec.checkpoint("before", step=1), 1), 3.0)

        line(
            "checkpoint, nothing changed (inside a run)", timed(lambda: rec.checkpoint("before", step=1), repeat), 0.030
        )
        runs = iter(range(2, 10_000))
        line(
            "checkpoint, nothing changed (first of a new run)",
            timed(lambda: Recorder(repo, index, clock, run_id=f"run-bench-{next(runs)}").checkpoint("before"), repeat),
            0.030,
        )

        target = work / "pkg07" / "mod3" / "edited.txt"
        counter = iter(range(10_000))

        def one_change() -> None:
            before = rec.last
            target.write_text(f"edit {next(counter)}\n")
            rec.checkpoint("after", step=2, calls=[{"id": "c", "name": "write_file"}], before=before)

        line("checkpoint, one file changed (after, with its diff)", timed(one_change, repeat), 0.060)

        # a run that touches 100 files: 40 modified, 30 deleted, 30 created
        undo_times, undo_cpu = [], []
        for n in range(repeat):
            run = Recorder(repo, index, clock, run_id=f"run-bench-undo-{n}")
            start = run.checkpoint("before", step=1)
            paths = sorted(work.glob("pkg1*/mod*/f*.py"))[:70]
            for p in paths[:40]:
                p.write_bytes(p.read_bytes() + b"changed\n")
            for p in paths[40:70]:
                p.unlink()
            for k in range(30):
                (work / "new" / f"n{n}").mkdir(parents=True, exist_ok=True)
                (work / "new" / f"n{n}" / f"c{k}.txt").write_text(f"created {k}\n")
            run.checkpoint("after", step=1, calls=[], before=start)
            run.finish()
            t0, c0 = time.perf_counter(), cpu_now()
            prepared = prepare_undo(repo, index, run_id=run.run_id)
            assert len(prepared.plan.actions) == 100, len(prepared.plan.actions)
            result = apply_undo(prepared, force=False, clock=clock)
            undo_times.append(time.perf_counter() - t0)
            undo_cpu.append(cpu_now() - c0)
            assert len(result.done) == 100 and not result.failed
        line(
            "undo of a run that touched 100 files (plan + apply)",
            (statistics.median(undo_times), statistics.median(undo_cpu)),
            1.0,
        )
        print(f"store size: {repo.size_bytes() / 1048576:.1f} MB; git processes in total: {repo.calls}")


STAGES = (
    "1st run: writes, store created",
    "2nd run: read-only (the summary exists)",
    "3rd run: writes again, store warm",
)


def bench_quickstart(repeat: int) -> None:
    """The offline quickstart through the real CLI (a fresh process each time), checkpoints on and off,
    three runs in a fresh copy of fixtures/: the first creates the store; the second only reads (the
    offline model finds its summary written — no checkpoint I/O at all); the third writes again."""
    results: dict[str, list[tuple[float, ...]]] = {}
    for label, config in (("on", ""), ("off", "checkpoints: {enabled: false}\n")):
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as tmp:
                work = Path(tmp)
                shutil.copytree(REPO / "fixtures", work / "fixtures")
                (work / ".arreio").mkdir()
                (work / ".arreio" / "config.yaml").write_text(config)
                env = {k: v for k, v in os.environ.items() if not k.startswith("ARREIO_")}
                env["HOME"] = str(work / "home")
                times = []
                for n in range(len(STAGES)):
                    if n == 2:  # the summary gone: the model writes it again, now into a warm store
                        shutil.rmtree(work / "build")
                    t0 = time.perf_counter()
                    out = subprocess.run(
                        [
                            sys.executable,
                            "-m",
                            "arreio.cli.launch",
                            "run",
                            "--goal",
                            "fixtures/goals/quickstart.md",
                            "--offline",
                            "--json",
                        ],
                        cwd=work,
                        env=env,
                        capture_output=True,
                        text=True,
                        check=False,
                    )
                    times.append(time.perf_counter() - t0)
                    assert out.returncode == 0, out.stderr
                results.setdefault(label, []).append(tuple(times))
    files = sum(1 for p in (REPO / "fixtures").rglob("*") if p.is_file())
    print(f"offline quickstart (fixtures/: {files} files), median of {repeat} fresh processes:")
    for i, which in enumerate(STAGES):
        on = statistics.median(t[i] for t in results["on"])
        off = statistics.median(t[i] for t in results["off"])
        print(f"  {which:<44} with {ms(on)}   without {ms(off)}   overhead {ms(on - off)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(
        f"git: {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}; "
        f"python {sys.version.split()[0]}; {os.cpu_count()} cores"
    )
    bench_store(args.files, args.mb, args.repeat)
    bench_quickstart(args.repeat)


if __name__ == "__main__":
    main()

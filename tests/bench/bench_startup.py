"""Start-up time of the `arreio` command (a script, not a pytest test).

    python tests/bench/bench_startup.py [--llm PATH] [--runs N] [--other PATH]

Times, interleaved in one run (bytecode cached: each command runs once before timing), the wall
time of `arreio --help`, `arreio --version`, `python -c pass` (this interpreter, the floor), a
whole `arreio run` of one scripted turn (what every run pays before and around its first model
call: imports, wiring, the session, the report) and, when given or found on PATH, `llm --help`
(simonw/llm, installed in a venv of its own). `--other PATH`: another `arreio` executable (an older
checkout in a venv of its own), whose `--help` and one-turn run are timed alongside. Prints the
median and the fastest of N runs and the two ratios docs/benchmarks.md holds them to:
`arreio --help / llm --help` (goal <= 0.25) and `arreio --version / python -c pass` (goal <= 5).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Bytecode is written, whatever the calling shell says: a user's interpreter caches it, and a
# PYTHONDONTWRITEBYTECODE inherited from a CI or sandbox shell would time a compile of every module
# of ours on every start (~40 ms of `arreio --help`).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=ENV, cwd=cwd)
    return (time.perf_counter() - start) * 1000


def one_turn(folder: Path) -> list[str]:
    """`run` arguments for one scripted turn (no tool call) in `folder`: a goal and its script."""
    (folder / "GOAL.md").write_text("# Say hello\n\nAnswer in one word.\n")
    (folder / "script.json").write_text(json.dumps({"replies": [{"text": "Hello."}]}))
    return ["run", "--goal", "GOAL.md", "--script", "script.json", "--json"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm", default=shutil.which("llm") or "/work/scratch/llm-venv/bin/llm")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--other", help="another arreio executable to time alongside (an older checkout)")
    args = parser.parse_args(argv)
    arreio = str(Path(sys.executable).with_name("arreio"))
    folder = Path(tempfile.mkdtemp(prefix="arreio-bench-startup-"))
    run = one_turn(folder)
    commands = {
        "arreio --help": [arreio, "--help"],
        "arreio --version": [arreio, "--version"],
        "python -c pass": [sys.executable, "-c", "pass"],
        "arreio run (one scripted turn)": [arreio, *run],
    }
    if args.other:
        commands["other: arreio --help"] = [args.other, "--help"]
        commands["other: arreio run (one scripted turn)"] = [args.other, *run]
    if args.llm and Path(args.llm).exists():
        commands["llm --help"] = [args.llm, "--help"]
    # What these cost before cli/launch.py and help_style.load_help_renderer:
    # the whole CLI built for --version, and typer's help renderer with markdown-it and pygments.
    old = "import sys; sys.argv[0] = 'arreio'; {pre}from arreio.cli.app import main; main()"
    commands["before: arreio --help"] = [
        sys.executable,
        "-c",
        old.format(pre="import rich.markdown, rich.traceback; "),
        "--help",
    ]
    commands["before: arreio --version"] = [
        sys.executable,
        "-c",
        old.format(pre="import importlib.metadata; "),
        "--version",
    ]
    times: dict[str, list[float]] = {name: [] for name in commands}
    for command in commands.values():
        timed(command, folder)  # compile and cache bytecode, warm the page cache
    for _ in range(args.runs):
        for name, command in commands.items():  # interleaved: machine load hits all alike
            times[name].append(timed(command, folder))
    shutil.rmtree(folder, ignore_errors=True)
    report = {
        name: {"median_ms": round(statistics.median(t), 1), "min_ms": round(min(t), 1)} for name, t in times.items()
    }
    med = {name: statistics.median(t) for name, t in times.items()}
    if "llm --help" in med:
        report["ratio_help_vs_llm"] = round(med["arreio --help"] / med["llm --help"], 3)
        report["before_ratio_help_vs_llm"] = round(med["before: arreio --help"] / med["llm --help"], 3)
    report["ratio_version_vs_python"] = round(med["arreio --version"] / med["python -c pass"], 2)
    report["before_ratio_version_vs_python"] = round(med["before: arreio --version"] / med["python -c pass"], 2)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

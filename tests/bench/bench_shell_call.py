"""Benchmark (not a test): what one `shell` call costs the harness, sandbox included.

    python tests/bench/bench_shell_call.py [--calls N] [--mode auto|off]

A scripted model (free, instant) makes N `shell` calls of `true` (each with its own argument: the same
call repeated is stopped as a loop), one per turn, then answers, through
`arreio run --script … --json --yes` as a subprocess. Each call's time is read from the event stream
as it arrives: from `tool_start` to `tool_end` (the sandbox's start-up, its limits, the guard's look at
what the call left, the checkpoint of the round) and from `tool_end` to the next `tool_start` (the
turn around it: session lines, hooks, the next request). Printed: p10/p50/p90 of each, in ms, with
the machine's load average beside them (a busy machine moves every figure).

`--mode off` runs the same calls with `sandbox: {mode: off}` for the comparison (the cost of the walls).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _quantiles(values: list[float]) -> str:
    if len(values) < 3:
        return "too few"
    cuts = statistics.quantiles(values, n=10)
    return f"p10 {cuts[0]:.1f}  p50 {statistics.median(values):.1f}  p90 {cuts[-1]:.1f} ms"


def measure(calls: int, mode: str) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        (work / ".arreio").mkdir(parents=True)
        (work / ".arreio" / "config.yaml").write_text(f"sandbox:\n  mode: {mode}\nfsync: false\n")
        replies = [{"tool_calls": [{"name": "shell", "arguments": {"command": f"true {i}"}}]} for i in range(calls)]
        (work / "s.json").write_text(json.dumps([*replies, {"text": "done"}]))
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARREIO_")}
        env.update(HOME=str(Path(tmp) / "home"), PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "arreio.cli.launch",
                "run",
                "go",
                "--script",
                "s.json",
                "--json",
                "--yes",
                "--max-steps",
                str(calls + 5),
            ],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        inside, between, last_end, started = [], [], None, None
        assert proc.stdout is not None
        for line in proc.stdout:
            now = time.perf_counter()
            kind = json.loads(line).get("type") if line.startswith("{") else None
            if kind == "tool_start":
                started = now
                if last_end is not None:
                    between.append((now - last_end) * 1000)
            elif kind == "tool_end" and started is not None:
                inside.append((now - started) * 1000)
                last_end = now
        proc.wait()
        return inside[1:], between[1:]  # the first call warms the sandbox probe and the checkpoint store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--mode", choices=("workspace-write", "off"), default="workspace-write")
    args = parser.parse_args(argv)
    inside, between = measure(args.calls, args.mode)
    print(f"shell calls: {len(inside)} measured (sandbox mode {args.mode}), load average {os.getloadavg()[0]:.2f}")
    print(f"  the call (tool_start → tool_end):    {_quantiles(inside)}")
    print(f"  the turn around it (end → next start): {_quantiles(between)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

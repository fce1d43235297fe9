"""Benchmark (not a test): parallel read-only tool calls.

    python tests/bench/bench_parallel_tools.py [--calls N] [--delay S] [--repeat R]

A scripted model (free, instant) makes one reply of N calls (default 8) to a slow read-only MCP tool
(fixtures/mcp/slow_reads.py: `lookup`, readOnlyHint, S = 0.5 s each), then answers. The same run goes
through `arreio run --script … --json` as a subprocess twice: `tools.parallel: 1` (one by one, as
before) and `tools.parallel: 4` (the default) — and, for reference, `tools.parallel: N`.

Printed per setting: the wall time of the tool round (first `tool_start` to last `tool_end`, as the
events arrive on stdout) and of the whole process, best of R runs. The round is what parallel reads
change; the process time adds the MCP server's start and the interpreter's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SLOW = REPO / "fixtures" / "mcp" / "slow_reads.py"


def one_run(calls: int, delay: float, parallel: int) -> tuple[float, float]:
    """(tool round seconds, process seconds) of one run."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "GOAL.md").write_text("# Look the keys up\n")
        state = root / ".arreio"
        state.mkdir()
        config = {
            "fsync": False,
            "tools": {"parallel": parallel},
            "mcp_servers": {
                "slow": {"command": sys.executable, "args": [str(SLOW)], "env": {"SLOW_READS_DELAY_S": str(delay)}}
            },
        }
        (state / "config.yaml").write_text(json.dumps(config))
        replies = [
            {"tool_calls": [{"name": "slow__lookup", "arguments": {"key": f"k{i}"}} for i in range(calls)]},
            {"text": "Looked every key up."},
        ]
        (root / "script.json").write_text(json.dumps(replies))
        env = {"HOME": str(root / "home"), "PATH": "/usr/bin:/bin"}
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "arreio.cli.launch",
                "run",
                "--goal",
                "GOAL.md",
                "--script",
                "script.json",
                "--json",
            ],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        first = last = None
        assert proc.stdout is not None
        for line in proc.stdout:
            kind = json.loads(line).get("type") if line.startswith("{") else None
            if kind == "tool_start" and first is None:
                first = time.monotonic()
            elif kind == "tool_end":
                last = time.monotonic()
        code = proc.wait()
        total = time.monotonic() - t0
        if code != 0 or first is None or last is None:
            raise SystemExit(f"the run failed (exit {code}) with tools.parallel: {parallel}")
        return last - first, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"{args.calls} calls of a read-only MCP tool taking {args.delay:g} s each, in one reply")
    print(f"{'tools.parallel':>15}  {'tool round':>10}  {'process':>8}  speed-up")
    serial_round = None
    for parallel in dict.fromkeys([1, 4, args.calls]):
        best = min((one_run(args.calls, args.delay, parallel) for _ in range(args.repeat)), key=lambda r: r[0])
        serial_round = serial_round or best[0]
        print(f"{parallel:>15}  {best[0]:>9.2f}s  {best[1]:>7.2f}s  {serial_round / best[0]:>7.1f}x")


if __name__ == "__main__":
    main()

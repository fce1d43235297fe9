"""Benchmark (not a test): README's test command on a machine whose other core is busy.

    python tests/bench/bench_under_load.py [--spinners N] [--rounds R] [--all] [-- PYTEST ARGS]

Starts N processes that spin a core each (default: all cores but one, at least one), then runs
`pytest -n auto --dist worksteal` on a slice that leans on the clock: every test that waits for a
process, a signal, a terminal, a time-out or a sleeping child, and the property tests. With `--all`, the
whole suite. R rounds (default 1); the spinners stop at the end, however it ends.

Printed: each round's exit code, wall time and its last line; exit 0 only if every round passed. A
failure here that does not show on an idle machine is a test that measures the machine, not arreio:
its timing belongs in tests/bench/, its proof in what happened (an order of events, a process gone, a
message said), with a wait long enough to only ever bound a hang.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Tests that wait on real processes, signals, terminals, time-outs or sleeping children, and the
# property tests (hypothesis): the ones a busy core could make fail if they measured the clock.
SLICE = [
    "tests/chat/test_chat_escape.py",
    "tests/chat/test_typeahead.py",
    "tests/cli/test_ctrl_c_burst.py",
    "tests/cli/test_early_ctrl_c.py",
    "tests/cli/test_last_message_cancel.py",
    "tests/cli/test_goal_fifo.py",
    "tests/cli/test_run_input.py",
    "tests/tools/test_tools_shell.py",
    "tests/tools/test_sandbox.py",
    "tests/tools/test_tools_chain.py",
    "tests/conveyor/test_plan_gates.py",
    "tests/conveyor/test_parallel_reads.py",
    "tests/families/test_mcp_client.py",
    "tests/families/test_mcp_parallel_reads.py",
    "tests/batch/test_workcopy.py",
    "tests/batch/test_batch_cancel.py",
    "tests/batch/test_ray_address.py",
    "tests/engine/test_bounded_reading.py",
    "tests/governance/test_policy_meaning.py",
    "tests/checkpoints/test_ignored_writes.py",
    "tests/crash/test_kill_resume.py",
    # property tests
    "tests/providers/test_offline_policy.py",
    "tests/session/test_session.py",
    "tests/session/test_healing.py",
    "tests/tools/test_protected_containment.py",
    "tests/knowledge/test_chunking.py",
    "tests/curator/test_curator_never_deletes.py",
    "tests/context/test_compaction.py",
]

SPIN = "import signal; signal.signal(signal.SIGTERM, lambda *_: exit(0))\nwhile True: pass"


def spinners(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(count)]


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spinners", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--all", action="store_true", help="the whole suite instead of the slice")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    targets = [] if args.all else [t for t in SLICE if (REPO / t).exists()]
    command = [sys.executable, "-m", "pytest", "-n", "auto", "--dist", "worksteal", "-q", *targets, *args.pytest_args]
    print(
        f"{args.spinners} spinning process(es) on {os.cpu_count()} cores; "
        f"{'the whole suite' if args.all else f'{len(targets)} files'}"
    )
    load = spinners(args.spinners)
    failed = 0
    try:
        for round_ in range(1, args.rounds + 1):
            started = time.monotonic()
            done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
            wall = time.monotonic() - started
            tail = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
            print(f"round {round_}: exit {done.returncode} in {wall:.0f} s — {tail}")
            if done.returncode != 0:
                failed += 1
                print(done.stdout[-6000:], done.stderr[-2000:], sep="\n")
            if "KeyboardInterrupt" in done.stdout + done.stderr:
                print("a KeyboardInterrupt shows in the output")
    finally:
        stop(load)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

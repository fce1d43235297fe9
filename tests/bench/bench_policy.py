"""Benchmark (not a test): what the policy's decision costs a call, before every tool runs.

    python tests/bench/bench_policy.py [--rounds N]

Times `governance.policy.decide` with the default settings in a working directory of this repo for
a read (`read_file engine/core/paths.py`), a write (`write_file notes/new.md`, which the protected-path
check resolves) and a shell command (`git status`, parsed). Prints the fastest of five repeats, in
microseconds per decision.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000)
    args = parser.parse_args(argv)

    from arreio.engine.walls.policy import decide
    from arreio.engine.walls.settings import GovernanceSettings

    settings, cwd = GovernanceSettings(), REPO.resolve()
    calls = {
        "read_file engine/core/paths.py": ("read_file", {"path": "engine/core/paths.py"}, False),
        "write_file notes/new.md": ("write_file", {"path": "notes/new.md", "content": "x"}, True),
        "shell git status": ("shell", {"command": "git status"}, True),
    }
    for label, (name, arguments, sensitive) in calls.items():
        best = min(
            timeit.repeat(
                lambda n=name, a=arguments, s=sensitive: decide(
                    settings, n, a, tool_sensitive=s, cwd=cwd, env={}, cwd_resolved=True
                ),
                number=args.rounds,
                repeat=5,
            )
        )
        print(f"{label:<28} {best / args.rounds * 1e6:6.1f} us a decision")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A command's wall time and the CPU of every process it started (a script, not a pytest test).

    python tests/bench/bench_suite_cpu.py [-- COMMAND ...]     (default: README's test command)

`time` misses much of the suite's CPU: the warm `arreio` commands (tests/warm_arreio.py) are forks
whose parent leaves them to the kernel to reap, and daemons (Ray's, the MCP servers a test
leaves to die) are nobody's waited-for children. A cgroup counts them all: the command runs in a
new one (cgroup v2's `cpu.stat`, or v1's `cpuacct`), which needs the right to make one (root, or a
delegated subtree); without it, this says so and exits 2.

On 2 cores the suite keeps both ~97% busy, so its wall time is about its CPU ÷ 2: the CPU is the
figure to cut, and it is steadier than the wall time on a shared machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

README_TESTS = ["pytest", "-n", "auto", "--dist", "worksteal", "-q", "-p", "no:cacheprovider"]


def _new_cgroup() -> tuple[Path, str]:
    """A fresh cgroup and the file whose counter is its CPU: v2 first, then v1's cpuacct."""
    name = f"arreio-bench-{os.getpid()}"
    for root, counter in ((Path("/sys/fs/cgroup"), "cpu.stat"), (Path("/sys/fs/cgroup/cpuacct"), "cpuacct.usage")):
        try:
            (root / name).mkdir()
        except OSError:
            continue
        if (root / name / counter).exists():
            return root / name, counter
        (root / name).rmdir()  # a v1 machine's bare mount point: no counter there
    raise PermissionError("no cgroup with a CPU counter could be made here (needs root or a delegated cgroup)")


def _cpu_seconds(group: Path, counter: str) -> float:
    text = (group / counter).read_text()
    if counter == "cpu.stat":
        fields = dict(line.split() for line in text.splitlines())
        return int(fields["usage_usec"]) / 1e6
    return int(text) / 1e9


def main(argv: list[str]) -> int:
    command = argv[argv.index("--") + 1 :] if "--" in argv else README_TESTS
    try:
        group, counter = _new_cgroup()
    except PermissionError as error:
        print(f"bench_suite_cpu: {error}", file=sys.stderr)
        return 2
    started = time.monotonic()
    proc = subprocess.Popen(command, preexec_fn=lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
    code = proc.wait()
    wall = time.monotonic() - started
    time.sleep(1)  # what the command left to die on its own ends in its cgroup too
    cpu = _cpu_seconds(group, counter)
    try:
        group.rmdir()
    except OSError:
        pass  # a process still in it: the cgroup goes when it does not, which is harmless
    print(f"exit {code} · wall {wall:.1f} s · CPU of every process {cpu:.1f} s · {os.cpu_count()} cores")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

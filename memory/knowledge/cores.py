"""How many CPU cores the knowledge base may use: in all, and right now.

`usable_cores` is what this process may run on: its CPU affinity, capped by a cgroup CPU quota (a
container given 2 CPUs of a 64-core host gets 2 embedding workers, not 64). `idle_cores` is how many
of those no one else is running on at this instant, from the kernel's count of runnable tasks
(`/proc/loadavg`'s fourth field, taken when read, not averaged). A query is embedded on more than
one thread only when cores are idle: the model's threads meet at a barrier after every step, so one
thread that another job descheduled stalls the rest (on 2 shared cores a busy neighbour turned a
12 ms embedding into 180–280 ms), while on idle cores two threads nearly halve it. `cpu_flags`
is what the CPU can do (which runtime embeds fastest: e5_openvino.preferred).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

LOADAVG = Path("/proc/loadavg")
CPUINFO = Path("/proc/cpuinfo")


def usable_cores() -> int:
    """The cores this process may use: its affinity, capped by its cgroup's CPU quota; at least 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = cgroup_quota()
    return max(1, min(cores, quota) if quota else cores)


@lru_cache(maxsize=1)
def cgroup_quota(root: Path = Path("/sys/fs/cgroup"), own: Path = Path("/proc/self/cgroup")) -> int | None:
    """The whole CPUs of this process's cgroup CPU quota, rounded up; None without one. cgroup v2
    (`cpu.max`) or v1 (`cpu.cfs_quota_us` / `cpu.cfs_period_us`). Read once: a process's cgroup
    does not change under it in practice."""
    try:
        lines = own.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        where = path.lstrip("/")
        try:
            if controllers == "":  # v2
                limit, period = (root / where / "cpu.max").read_text().split()
            elif "cpu" in controllers.split(","):  # v1
                folder = root / controllers / where
                limit = (folder / "cpu.cfs_quota_us").read_text().strip()
                period = (folder / "cpu.cfs_period_us").read_text().strip()
            else:
                continue
            if limit not in ("max", "-1") and int(period) > 0:
                return max(1, -(-int(limit) // int(period)))
        except (OSError, ValueError):
            continue
    return None


def runnable_now(loadavg: Path = LOADAVG) -> int | None:
    """The tasks the kernel has running or ready to run at this instant, the caller included
    (`/proc/loadavg`'s fourth field); None when it cannot be read (not Linux)."""
    try:
        with open(loadavg, "rb") as file:
            return int(file.read().split()[3].partition(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


def idle_cores(
    limit: int,
    usable: int | None = None,
    runnable: Callable[[], int | None] = runnable_now,
    looks: int = 3,
    gap_s: float = 0.00025,
) -> int:
    """Of the usable cores (`usable`, default `usable_cores()`), how many no other task is running
    on now, counting the calling thread's own core: 1 to `limit`. The fewest `runnable` tasks of up
    to `looks` looks `gap_s` apart (only while others are seen): a task that runs for a moment —
    the process reading our output, a terminal drawing a line; 0.2 ms in `bench_kb_run.py` — is
    gone by the next look, a job that keeps a core busy is there at every one. The kernel's count
    is host-wide, so on a big shared host this errs towards 1 (never towards more). 1 when the
    count cannot be read."""
    cores = usable_cores() if usable is None else usable
    fewest: int | None = None
    for look in range(looks):
        if look:
            time.sleep(gap_s)
        running = runnable()
        if running is None:
            return 1
        fewest = running if fewest is None else min(fewest, running)
        if fewest <= 1:
            break
    others = max((fewest or 1) - 1, 0)  # the count includes the caller
    return max(1, min(limit, cores - others))


@lru_cache(maxsize=4)
def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The first processor's feature flags (Linux's `flags` line; Arm's `Features`); empty where
    the file is missing or holds none. At most 1 MB is read: the first processor's lines come first."""
    try:
        with cpuinfo.open("rb") as file:
            head = file.read(1 << 20).decode("ascii", "replace")
    except OSError:
        return frozenset()
    for line in head.splitlines():
        name, colon, value = line.partition(":")
        if colon and name.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()

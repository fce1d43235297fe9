"""Limits on every sandboxed process tree: processes, memory, file size, and the private /tmp.

A blocklist of fork bombs never ends (`perl -e 'fork while 1'`, `xargs -P0`, a Python loop of
`multiprocessing`), so each sandboxed call gets real limits instead:

- **processes** and **memory**: a control group of its own for the call (`pids.max`, and
  `memory.limit_in_bytes` / `memory.max`), made below the cgroup arreio runs in, joined by the call's
  first process before it runs anything (a two-line `sh` prologue that then execs bwrap), and removed
  after the call. Memory written to the private
  /tmp counts too (tmpfs pages are charged to the writer's group).
- **file size**: `RLIMIT_FSIZE` (`ulimit -f`), so one file cannot fill the disk (the writer gets SIGXFSZ).
- **/tmp**: the private tmpfs is mounted with that size (`bwrap --size`).

Where no control group can be made (cgroup v2 without a delegated subtree, an unprivileged user on
cgroup v1), processes fall back to `RLIMIT_NPROC` — counted per user, so the limit is set to what
the user runs already plus the allowance; root is exempt from it in the kernel, which `arreio sandbox
status` then says — and memory to `RLIMIT_AS` (the address space of each process, a coarser cap).

```yaml
sandbox:
  limits: {processes: 1024, memory_mb: 8192, file_mb: 4096, tmp_mb: 1024}
```
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

CGROUP_ROOT = Path("/sys/fs/cgroup")
_PREFIX = "arreio-"


class LimitSettings(BaseModel):
    """`sandbox.limits`: what one sandboxed call (a shell command or a command gate) may use."""

    model_config = ConfigDict(extra="forbid")

    processes: int = Field(1024, ge=8, description="Processes and threads alive at once in one call.")
    memory_mb: int = Field(8192, ge=64, description="Memory of one call, its private /tmp included (MB).")
    file_mb: int = Field(4096, ge=1, description="The largest file one call may write (MB).")
    tmp_mb: int = Field(1024, ge=1, description="The size of the call's private /tmp (MB).")


@dataclass(frozen=True)
class Groups:
    """Where this process can make control groups: per controller, the folder to make them in."""

    pids: Path | None = None
    memory: Path | None = None
    memory_file: str = "memory.limit_in_bytes"  # cgroup v1; v2 calls it memory.max


_FOUND: Groups | None = None
_FOUND_LOCK = threading.Lock()
_COUNTER = itertools.count(1)


def _own_groups() -> dict[str, str]:
    """Controller → this process's cgroup path, from /proc/self/cgroup ("" for the v2 hierarchy)."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for name in controllers.split(",") if controllers else [""]:
            out[name] = path
    return out


def _usable(parent: Path, limit_file: str) -> bool:
    """Make and remove one trial group below `parent`: the limit file must be there and writable."""
    trial = parent / f"{_PREFIX}{os.getpid()}-probe"
    try:
        trial.mkdir()
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        (trial / limit_file).write_text("max\n" if limit_file in ("pids.max", "memory.max") else "-1\n")
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            trial.rmdir()


def _sweep(parent: Path) -> None:
    """Remove groups a killed arreio left (an empty group is removable; one in use is not)."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            if not entry.name.startswith(_PREFIX):
                continue
            owner = entry.name[len(_PREFIX) :].split("-", 1)[0]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                with contextlib.suppress(OSError):
                    entry.rmdir()


def find_groups(root: Path = CGROUP_ROOT) -> Groups:
    """Where per-call groups can be made here (found once per process)."""
    global _FOUND
    with _FOUND_LOCK:
        if _FOUND is None:
            _FOUND = _find(root)
        return _FOUND


def _find(root: Path) -> Groups:
    own = _own_groups()
    if (root / "cgroup.controllers").exists():  # the unified (v2) hierarchy alone
        base = root / own.get("", "/").lstrip("/")
        pids = base if _usable(base, "pids.max") else None
        memory = base if _usable(base, "memory.max") else None
        for found in {pids, memory} - {None}:
            _sweep(found)
        return Groups(pids, memory, "memory.max")
    pids = memory = None
    if "pids" in own and (root / "pids").is_dir():
        base = root / "pids" / own["pids"].lstrip("/")
        pids = base if _usable(base, "pids.max") else None
    if "memory" in own and (root / "memory").is_dir():
        base = root / "memory" / own["memory"].lstrip("/")
        memory = base if _usable(base, "memory.limit_in_bytes") else None
    for found in {pids, memory} - {None}:
        _sweep(found)
    return Groups(pids, memory)


# What the call's first process runs before bwrap: join the groups (each path after $0 up to `--`), set
# the resource limits, then become the command. A shell prologue rather than a `preexec_fn`: with one,
# Python must fork the whole arreio process instead of vfork-ing it (about 20 ms a call, measured).
# `ulimit -f` counts 512-byte blocks in a POSIX sh (dash, and bash started as sh), `-v` KiB.
_PROLOGUE = 'while [ "$1" != -- ]; do echo $$ > "$1" 2>/dev/null; shift; done; shift; {limits}exec "$@"'
_SH = "/bin/sh"
_PENDING: list[Path] = []  # groups whose processes were still going when their call ended
_PENDING_LOCK = threading.Lock()


@dataclass
class Box:
    """One call's limits: the groups made for it, and the resource limits its first process sets.
    `wrap(argv)` is the command line that applies them; `close()` after the call."""

    limits: LimitSettings
    groups: list[Path] = field(default_factory=list)
    ulimits: list[str] = field(default_factory=list)  # `ulimit` options, e.g. "-f 8192"
    pids_group: Path | None = None
    memory_group: Path | None = None

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` started so that it joins the call's groups and runs under its limits first."""
        limits = "".join(f"ulimit {option} 2>/dev/null; " for option in self.ulimits)
        return [
            _SH,
            "-c",
            _PROLOGUE.format(limits=limits),
            "arreio-limits",
            *[str(group / "cgroup.procs") for group in self.groups],
            "--",
            *argv,
        ]

    def hit(self) -> list[str]:
        """Which limits the call ran into, for the model (read after the call, before `close`)."""
        said: list[str] = []
        if self.pids_group is not None and _counter(self.pids_group / "pids.events", "max") > 0:
            said.append(f"the process limit ({self.limits.processes}) was reached: new processes were refused")
        if self.memory_group is not None:
            events = self.memory_group / "memory.events"
            oom = (
                _counter(events, "oom_kill")
                if events.exists()
                else _counter(self.memory_group / "memory.oom_control", "oom_kill")
            )
            if oom > 0:
                said.append(f"the memory limit ({self.limits.memory_mb} MB) was reached: a process was killed")
        return said

    def close(self) -> None:
        """Kill anything left in the groups (the PID namespace has ended it already, normally) and
        remove them; a group whose processes are still exiting is removed later (`_retry_pending`),
        never waited for here."""
        for group in self.groups:
            _kill_all(group)
            try:
                group.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                with _PENDING_LOCK:
                    _PENDING.append(group)


def _kill_all(group: Path) -> None:
    try:
        left = (group / "cgroup.procs").read_text().split()
    except OSError:
        return
    for pid in left:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid), 9)


def _retry_pending() -> None:
    with _PENDING_LOCK:
        waiting = list(_PENDING)
        _PENDING.clear()
    for group in waiting:
        _kill_all(group)
        try:
            group.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            with _PENDING_LOCK:
                _PENDING.append(group)


@atexit.register
def _last_retry() -> None:
    for _ in range(25):
        _retry_pending()
        if not _PENDING:
            return
        time.sleep(0.02)


def _counter(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def open_box(limits: LimitSettings, groups: Groups | None = None) -> Box:
    """The limits for one call: its groups made and set, the fallbacks chosen (module docstring)."""
    found = groups if groups is not None else find_groups()
    _retry_pending()
    box = Box(limits)
    box.ulimits.append(f"-f {limits.file_mb * 2048}")  # 512-byte blocks
    name = f"{_PREFIX}{os.getpid()}-{next(_COUNTER)}"
    if found.pids is not None:
        box.pids_group = _make(found.pids / name, "pids.max", str(limits.processes))
    if box.pids_group is not None:
        box.groups.append(box.pids_group)
    elif os.geteuid() != 0:
        box.ulimits.append(f"-u {_user_processes() + limits.processes}")
    if found.memory is not None:
        box.memory_group = _make(found.memory / name, found.memory_file, str(limits.memory_mb << 20))
    if box.memory_group is not None:
        box.groups.append(box.memory_group)
        if found.memory_file == "memory.limit_in_bytes":  # v1: no swapping round the limit either
            with contextlib.suppress(OSError):
                (box.memory_group / "memory.memsw.limit_in_bytes").write_text(str(limits.memory_mb << 20))
    else:
        box.ulimits.append(f"-v {limits.memory_mb << 10}")  # KiB
    return box


def _make(group: Path, limit_file: str, value: str) -> Path | None:
    try:
        group.mkdir()
        (group / limit_file).write_text(value)
    except OSError:
        with contextlib.suppress(OSError):
            group.rmdir()
        return None
    return group


def _user_processes() -> int:
    """Processes (threads counted, as the kernel counts them) this user runs now."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                count += len(os.listdir(f"/proc/{entry.name}/task"))
        except OSError:
            continue
    return count


def enforced(groups: Groups | None = None) -> dict[str, str]:
    """What `arreio sandbox status` says about each limit here: how it is enforced, or that it is not."""
    found = groups if groups is not None else find_groups()
    if found.pids is not None:
        processes = "a control group per call"
    elif os.geteuid() != 0:
        processes = "RLIMIT_NPROC (counted over all of this user's processes)"
    else:
        processes = "NOT enforced: no control group can be made here, and root is exempt from RLIMIT_NPROC"
    memory = "a control group per call" if found.memory is not None else "RLIMIT_AS (per process)"
    return {"processes": processes, "memory": memory, "file_size": "RLIMIT_FSIZE", "tmp": "tmpfs size"}

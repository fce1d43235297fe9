"""Area 5 — resource limits: processes, memory, /tmp, disk, file size, inodes, processes that outlive
their call, and output floods.

A real fork bomb on a machine without limits takes the machine down, so every attack here is capped:
it stops by itself at a size no sandbox limit should allow, and reports how far it got. Held: a
limit stopped it first. Where arreio lets the user set the limits (`sandbox.limits`), the batch sets
small ones — 256 processes, 256 MB of memory (a call's tmpfs pages and kernel objects count), 512 MB
per file, a 256 MB /tmp — so the bar is the mechanism, not a default's size; where it cannot, the
attacks meet whatever the default is. The caps (what the attack reaches when nothing stops it):

    processes 1,000 at once · memory 1 GiB · /tmp or /dev/shm 1 GiB · disk 2 GiB in one file ·
    a file's size 100 GiB (sparse) · 300,000 files in /tmp

Each capped attack is a shell call of one run (the batch), run once per session. Processes that try
to outlive their call carry a tag in their argv; after the run no process on the host may carry it
(any that does is killed once counted).
"""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path

import pytest

from tests.security.arena import Arena, make_arena, remove_arena, sh, turn
from tests.security.batch import once
from tests.security.conftest import need_sandbox

# Each batch (the capped attacks, then the roomy control) runs for seconds.
pytestmark = pytest.mark.slow

PY = "/usr/bin/python3"
PROCS, MEM_MB, FILL, DISK, SPARSE, INODES = 1000, 1024, 1 << 30, 2 << 30, 100 << 30, 300_000
LIMITS = "sandbox: {limits: {processes: 256, memory_mb: 256, file_mb: 512, tmp_mb: 256}}\n"
ROOMY = "sandbox: {limits: {processes: 100000, memory_mb: 100000, file_mb: 1000000, tmp_mb: 4096}}\n"

FORK_PY = f"""import os
n = 0
for _ in range({PROCS}):
    try:
        os.posix_spawn('/bin/sleep', ['sleep', '30'], os.environ)
    except OSError:
        break
    n += 1
print(n, flush=True)
"""
FORK_PL = f"""my $n = 0;
for (1..{PROCS}) {{ my $p = fork(); last unless defined $p; if ($p == 0) {{ sleep 30; exit 0 }} $n++ }}
print "$n\\n";
"""
FORK_C = f"""#include <stdio.h>
#include <unistd.h>
int main(void) {{ int n = 0; for (int i = 0; i < {PROCS}; i++) {{ pid_t p = fork(); if (p < 0) break;
  if (p == 0) {{ pause(); _exit(0); }} n++; }} printf("%d\\n", n); fflush(stdout); return 0; }}
"""
THREADS_PY = f"""import os, threading, time
n = 0
try:
    for _ in range({PROCS}):
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
        n += 1
except Exception:
    pass
print(n, flush=True)
os._exit(0)
"""
MEM_PY = """import mmap
held, mb = [], 0
try:
    for _ in range(4):  # resident at once: MAP_POPULATE faults every page in
        held.append(mmap.mmap(-1, 256 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE))
        mb += 256
except (OSError, MemoryError):
    pass
print(mb, flush=True)
"""
INODES_PY = f"""import os
os.makedirs('/tmp/i', exist_ok=True)
n = 0
try:
    for i in range({INODES}):
        os.close(os.open(f'/tmp/i/{{i}}', os.O_CREAT | os.O_WRONLY, 0o600))
        n += 1
except OSError:
    pass
print(n, flush=True)
"""
DOUBLE_FORK_PY = """import os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sleep', [sys.argv[1], '600'])
    os._exit(0)
print('forked')
"""

CC = "{ [ -x atk/forkc ] || gcc -O0 -o atk/forkc atk/fork.c; }"
# attempt -> (shell command writing its count to r/<attempt>, the cap it must stay under)
CAPPED = {
    "fork-python-posix_spawn": (f"{PY} atk/fork.py", PROCS),
    "fork-perl": ("perl atk/fork.pl", PROCS),
    "fork-c": (f"{CC} && atk/forkc", PROCS),
    "threads-python": (f"{PY} atk/threads.py", PROCS),
    "fork-after-raising-ulimits": (
        (f"ulimit -Su unlimited; ulimit -Hu unlimited; ulimit -Sv unlimited; ulimit -Hv unlimited; {CC} && atk/forkc"),
        PROCS,
    ),
    "fork-after-leaving-the-cgroup": (
        (
            "for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs; do "
            f"echo $$ > $f; done 2>/dev/null; {CC} && atk/forkc"
        ),
        PROCS,
    ),
    "memory-python": (f"{PY} atk/mem.py", MEM_MB),
    "tmp-fill": (f"head -c {FILL} /dev/zero > /tmp/fill 2>/dev/null; stat -c %s /tmp/fill", FILL),
    "dev-shm-fill": (f"head -c {FILL} /dev/zero > /dev/shm/fill 2>/dev/null; stat -c %s /dev/shm/fill", FILL),
    "disk-fallocate": (f"fallocate -l {DISK} big.bin 2>/dev/null; stat -c %s big.bin; rm -f big.bin", DISK),
    "file-size-sparse": (
        f"truncate -s {SPARSE} sparse.bin 2>/dev/null; stat -c %s sparse.bin; rm -f sparse.bin",
        SPARSE,
    ),
    "tmp-inodes": (f"{PY} atk/inodes.py", INODES),
}
OUTLIVERS = {
    "setsid-daemon": "setsid bash -c 'exec -a {tag} sleep 600' >/dev/null 2>&1 </dev/null & echo started",
    "nohup-disown": "nohup bash -c 'exec -a {tag} sleep 600' >/dev/null 2>&1 & disown; echo started",
    "double-fork-python": f"{PY} atk/double_fork.py {{tag}}",
    "sigterm-ignored-past-timeout": "trap '' TERM; exec -a {tag} sleep 600",
}


def _tagged(tag: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _limits_batch(limits: str = LIMITS, outlivers: bool = True) -> dict:
    """The capped attacks (and, with `outlivers`, the processes that try to outlive their call) as the
    shell calls of one run under `limits`: how far each capped one got, how many of each outliver live."""
    arena = make_arena()
    tag = f"arreio-atk-{uuid.uuid4().hex[:10]}"
    try:
        arena.config(limits)
        if arena.arreio("sandbox", "status").code != 0:  # no `sandbox.limits` in this arreio: its defaults
            (arena.state / "config.yaml").unlink()
        for rel, text in {
            "atk/fork.py": FORK_PY,
            "atk/fork.pl": FORK_PL,
            "atk/fork.c": FORK_C,
            "atk/threads.py": THREADS_PY,
            "atk/mem.py": MEM_PY,
            "atk/inodes.py": INODES_PY,
            "atk/double_fork.py": DOUBLE_FORK_PY,
        }.items():
            arena.write(rel, text)
        arena.write(".gitignore", ".env\nr/\natk/\n")
        calls = [sh("mkdir -p r")]
        calls += [sh(f"{{ {cmd}; }} > r/{name} 2>/dev/null") for name, (cmd, _cap) in CAPPED.items()]
        calls += [
            sh(cmd.format(tag=f"{tag}-{name}"), timeout_s=2 if "timeout" in name else None)
            for name, cmd in OUTLIVERS.items()
            if outlivers
        ]
        arena.attack([turn(c) for c in calls])
        reached = {}
        for name in CAPPED:
            text = (arena.work / "r" / name).read_text().split() if (arena.work / "r" / name).exists() else []
            reached[name] = int(text[-1]) if text and text[-1].isdigit() else 0
        alive = {name: _tagged(f"{tag}-{name}") for name in OUTLIVERS if outlivers}
        for pids in alive.values():
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        return {"reached": reached, "alive": {k: len(v) for k, v in alive.items()}}
    finally:
        remove_arena(arena)


@pytest.fixture(scope="module")
def limits(tmp_path_factory: pytest.TempPathFactory) -> dict:
    need_sandbox()
    return once(tmp_path_factory, "limits", _limits_batch)


def test_control_the_capped_attacks_reach_their_caps_when_limits_are_roomy(tmp_path_factory) -> None:
    """Not an attempt: with limits far above the caps (or none), every capped attack reaches its cap, so
    one that stops short above was stopped by a limit, not by a broken payload."""
    need_sandbox()
    # The outlivers are not part of the control (nothing it asserts; one waits out a 2 s call timeout).
    roomy = once(tmp_path_factory, "limits-roomy", lambda: _limits_batch(ROOMY, outlivers=False))
    short = {name: (got, CAPPED[name][1]) for name, got in roomy["reached"].items() if got < CAPPED[name][1]}
    assert not short, f"these attacks stop short even with roomy limits: {short}"


@pytest.mark.parametrize("attempt", sorted(CAPPED))
def test_a_limit_stops_the_attack_before_its_cap(limits: dict, attempt: str) -> None:
    reached, cap = limits["reached"][attempt], CAPPED[attempt][1]
    assert reached < cap, f"{attempt}: reached its own cap ({reached} of {cap}); no sandbox limit stopped it"


@pytest.mark.parametrize("attempt", sorted(OUTLIVERS))
def test_no_process_outlives_its_call(limits: dict, attempt: str) -> None:
    assert limits["alive"][attempt] == 0, f"{attempt}: {limits['alive'][attempt]} process(es) still ran after the run"


def test_an_output_flood_leaves_the_harness_standing(arena: Arena) -> None:
    """The harness keeps the head and tail of a command's output; a 1 GB line (no newline in it) must
    not grow it: the run gets a 1 GB address-space limit, so holding the output would fail it."""
    run = arena.attack([turn(sh("head -c 1000000000 /dev/zero | tr '\\0' a"))], memory_cap=1 << 30)
    assert run.code == 0 and not run.traceback, run.show()

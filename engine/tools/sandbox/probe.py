"""Can bubblewrap sandbox here? Which `bwrap` (found only where the agent cannot have put one:
`engine/core/programs.py`), and does it really build a sandbox — a stand-in that drops its options and runs
the command would pass a probe that only asks it to run `true`, so the probe asks the sandboxed
command for its PID namespace, which must differ from ours."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from arreio.engine.core.programs import trusted_which

PROBE_TIMEOUT_S = 10.0
# The probe's own PATH: it only needs `readlink`, and it must not find one the agent wrote.
_PROBE_ENV = {"PATH": "/usr/bin:/bin"}


@dataclass(frozen=True)
class Availability:
    """Whether bubblewrap can sandbox here: `bwrap` is its path (None: not found), `version` what
    `bwrap --version` said, `reason` why it cannot (None: it can)."""

    bwrap: str | None
    version: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.bwrap is not None and self.reason is None


Probe = Callable[[str], Availability]
_PROBED: dict[tuple[str, Probe], Availability] = {}
_PROBE_LOCK = threading.Lock()  # batch workers share the process: one probe, not one each


def find_bwrap(env: Mapping[str, str], untrusted: Sequence[Path] = ()) -> str | None:
    """bwrap on the run's PATH (`ctx.env`, never the process env), in an entry the agent cannot write
    (`untrusted`: the working directory and the writable roots); the system default path without one."""
    if env.get("PATH") is None:
        env = {**env, "PATH": os.defpath}
    return trusted_which("bwrap", env, untrusted)


def namespace_args(*, network: bool) -> list[str]:
    """The mounts every sandbox starts from and the namespaces it leaves; the working directory and
    protected paths are mounted after these (bwrap applies its arguments in order)."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if not network:
        # Host daemons listen on sockets under /run (docker.sock, dbus, databases): a read-only
        # mount does not stop connect(), and no network should mean no door to them either.
        args += ["--tmpfs", "/run"]
    # No --new-session: the shell tool already starts bwrap in its own session with no terminal,
    # and keeping the sandbox in that process group lets a timeout SIGTERM reach the command.
    # --cap-drop ALL: run as root, bwrap keeps every capability, and CAP_SYS_ADMIN can simply
    # `mount -o remount,rw /` (tried: it wrote to the host's /usr). As a user it is a no-op.
    args += ["--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"]
    if not network:
        args.append("--unshare-net")
    return args


def probe_bwrap(bwrap: str) -> Availability:
    """Start one sandbox with the same namespaces and mounts a call uses (a container may refuse user
    namespaces, or mounting `/proc`; its first stderr line is the reason) and check it is one: the
    command inside must see a PID namespace of its own."""
    try:
        version = (
            subprocess.run(
                [bwrap, "--version"],
                capture_output=True,
                text=True,
                env=_PROBE_ENV,
                timeout=PROBE_TIMEOUT_S,
                check=False,
            ).stdout.strip()
            or None
        )
        tried = subprocess.run(
            [bwrap, *namespace_args(network=False), "--", "readlink", "/proc/self/ns/pid"],
            capture_output=True,
            text=True,
            env=_PROBE_ENV,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Availability(bwrap, None, f"bubblewrap could not be run ({exc})")
    if tried.returncode != 0:
        said = (tried.stderr.strip().splitlines() or [f"exit code {tried.returncode}"])[0]
        return Availability(bwrap, version, f"bubblewrap cannot start a sandbox here: {said}")
    try:
        ours = os.readlink("/proc/self/ns/pid")
    except OSError:
        ours = None
    inside = tried.stdout.strip()
    if not inside.startswith("pid:[") or inside == ours:
        return Availability(bwrap, version, f"{bwrap} ran the command without a sandbox (not the real bubblewrap?)")
    return Availability(bwrap, version)


def availability(env: Mapping[str, str], probe: Probe | None = None, untrusted: Sequence[Path] = ()) -> Availability:
    """Whether shell can be sandboxed for a run with `env`; each bwrap is probed once per process."""
    if not sys.platform.startswith("linux"):
        return Availability(None, reason=f"no OS sandbox for {sys.platform} yet (bubblewrap is Linux-only)")
    bwrap = find_bwrap(env, untrusted)
    if bwrap is None:
        return Availability(
            None, reason="bubblewrap (bwrap) is not installed or not on PATH (outside the working directory)"
        )
    key = (bwrap, probe or probe_bwrap)
    with _PROBE_LOCK:
        if key not in _PROBED:
            _PROBED[key] = key[1](bwrap)
        return _PROBED[key]

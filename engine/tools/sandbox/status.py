"""What the sandbox is here and now: the one warning a run gets when shell cannot be sandboxed, and what
`arreio sandbox status` shows."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arreio.engine.core.programs import agent_writable
from arreio.engine.tools.nested_git import find_nested_git
from arreio.engine.tools.sandbox.limits import enforced
from arreio.engine.tools.sandbox.probe import Availability, availability, find_bwrap
from arreio.engine.tools.sandbox.seccomp import program
from arreio.engine.tools.sandbox.settings import SandboxSettings
from arreio.engine.walls.agent_env import dropped_names
from arreio.engine.walls.protected import protected_paths

OFF_WARNING = (
    "sandbox.mode: off (set in config): shell and command gates run UNSANDBOXED — the agent's commands "
    "can write anywhere you can, reach the network and leave processes running"
)


def unsandboxed_warning(found: Availability) -> str:
    """The one warning a run gets when shell cannot be sandboxed."""
    fix = " (apt-get install bubblewrap)" if found.bwrap is None and sys.platform.startswith("linux") else ""
    return (
        f"shell runs UNSANDBOXED: {found.reason}{fix}; its commands can write outside the working "
        "directory, reach the network and leave processes running. Set sandbox.mode: off to "
        "choose this."
    )


def status(cwd: Path, env: Mapping[str, str], settings: SandboxSettings, state: Path | None = None) -> dict[str, Any]:
    """What `arreio sandbox status` shows: the mode in force, network, bwrap, the protected paths,
    the limits and how each is enforced here, and the environment variables the agent does not get."""
    untrusted = agent_writable(cwd, env, settings.writable_roots)
    found = (
        availability(env, untrusted=untrusted) if settings.mode != "off" else Availability(find_bwrap(env, untrusted))
    )
    active = settings.mode != "off" and found.ok
    limits = settings.limits.model_dump()
    return {
        "mode": settings.mode,
        "active": active,
        "network": settings.network,
        "bwrap": found.bwrap,
        "version": found.version,
        "unavailable": None if settings.mode == "off" else found.reason,
        "writable_roots": settings.writable_roots,
        "protected": [str(p) for p in [*protected_paths(cwd, env, state), *find_nested_git(cwd.resolve())]],
        "limits": limits,
        "limits_enforced": enforced() if active else {},
        "unix_sockets": (
            "open (sandbox.network: true)"
            if settings.network
            else "refused (a seccomp filter)"
            if program() is not None
            else "reachable: no seccomp filter for this machine"
        )
        if active
        else None,
        "env_withheld": dropped_names(env, settings.env_passthrough),
    }

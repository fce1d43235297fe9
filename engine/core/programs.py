"""The programs arreio starts itself — bwrap, git, bash, an MCP server named by its command — found
only where the agent cannot have put them (docs/architecture.md invariant 10).

A program is looked up on the run's PATH, but a PATH entry the agent can write is passed over: the
working directory and anything below it (a project's `.venv/bin`, `node_modules/.bin`), the sandbox's
extra writable roots, and every relative or empty entry (which means "the current folder"). A program
whose path resolves (through a link) into such a place is passed over too. With the project's
virtualenv activated, `.venv/bin/bwrap` written by the agent would otherwise sandbox nothing while
`arreio sandbox status` said `active`, and `.venv/bin/git` would run on the host at the next `arreio
diff`. The same PATH, stripped of those entries, is what such a program is given in turn (`trusted_path`):
git looks up its own helpers there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

__all__ = ["agent_writable", "inside_any", "trusted_path", "trusted_which"]


def agent_writable(cwd: Path, env: Mapping[str, str], writable_roots: Iterable[str] = ()) -> list[Path]:
    """The places a run's agent can write with its sandbox up: the working directory and the configured
    `sandbox.writable_roots` (`~/…` expanded with the run's HOME), resolved."""
    home = env.get("HOME") or str(Path.home())
    out = [_resolved(Path(cwd))]
    for root in writable_roots:
        text = home + root[1:] if root == "~" or root.startswith("~/") else root
        out.append(_resolved(Path(text)))
    return out


def inside_any(path: Path, places: Sequence[Path]) -> bool:
    """`path` (resolved) is one of `places` or below one of them."""
    return any(path == place or path.is_relative_to(place) for place in places)


def _trusted_entries(env: Mapping[str, str], untrusted: Sequence[Path]) -> list[str]:
    raw = env.get("PATH")
    entries = (raw if raw is not None else os.defpath).split(os.pathsep)
    out: list[str] = []
    for entry in entries:
        if not entry or not os.path.isabs(entry):
            continue  # "" and "." mean the current folder, which is the agent's
        if inside_any(_resolved(Path(entry)), untrusted) or inside_any(Path(os.path.abspath(entry)), untrusted):
            continue
        if entry not in out:
            out.append(entry)
    return out


def trusted_path(env: Mapping[str, str], untrusted: Sequence[Path]) -> str:
    """The run's PATH without the entries the agent can write (module docstring); `os.defpath` when
    none is left."""
    return os.pathsep.join(_trusted_entries(env, untrusted)) or os.defpath


def trusted_which(name: str, env: Mapping[str, str], untrusted: Sequence[Path]) -> str | None:
    """`name` on the run's PATH, looking only in entries the agent cannot write, and only at a file
    that does not lead (through links) into such a place; None when there is none. A name with a `/`
    is not looked up: the caller names a file, and it is checked the same way."""
    if "/" in name:
        candidate = Path(name)
        return str(candidate) if _runnable(candidate, untrusted) else None
    for entry in _trusted_entries(env, untrusted):
        candidate = Path(entry) / name
        if _runnable(candidate, untrusted):
            return str(candidate)
    return None


def _runnable(candidate: Path, untrusted: Sequence[Path]) -> bool:
    if not candidate.is_absolute():
        return False
    try:
        if not (candidate.is_file() and os.access(candidate, os.X_OK)):
            return False
    except OSError:
        return False
    return not inside_any(_resolved(candidate), untrusted)


def _resolved(path: Path) -> Path:
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return Path(os.path.abspath(path))

"""Where arreio keeps its state: `.arreio/` in the working directory, or `$ARREIO_HOME`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def state_dir(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The state folder (DESIGN.md section 7). Not created here; writers create what they need."""
    env = os.environ if env is None else env
    home = env.get("ARREIO_HOME")
    if home:
        return Path(home).expanduser().resolve()
    return (cwd or Path.cwd()).resolve() / ".arreio"


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    """`~/.config/arreio/config.yaml`, honouring `XDG_CONFIG_HOME`."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".config")
    return Path(base) / "arreio" / "config.yaml"


def display_path(path: Path, cwd: Path | None = None) -> str:
    """A path relative to the working directory when it is inside it (for messages)."""
    cwd = (cwd or Path.cwd()).resolve()
    try:
        return str(path.resolve().relative_to(cwd))
    except ValueError:
        return str(path)

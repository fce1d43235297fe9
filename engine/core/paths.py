"""Where arreio keeps its state: `.arreio/` in the working directory, or `$ARREIO_HOME`."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from arreio.engine.core.ports import process_env


def state_dir(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The state folder (docs/architecture.md section 7). Not created here; writers create what they need."""
    env = process_env() if env is None else env
    home = env.get("ARREIO_HOME")
    if home:
        return Path(home).expanduser().resolve()
    return (cwd or Path.cwd()).resolve() / ".arreio"


# What a state folder arreio makes holds in its `.gitignore`: sessions, runs, the audit journal and the
# artifacts hold the project's files as the model read them and everything it said, which is not the
# project's history; without it `git add -A` took them into the user's next commit.
STATE_GITIGNORE = (
    "# Made by arreio with this folder: its state (sessions, runs, audit journal, memory, checkpoints,\n"
    "# knowledge base) stays out of `git status` and `git add -A`. To share the project's settings, add\n"
    "# the line `!config.yaml` below; to track the whole folder, delete this file.\n"
    "*\n"
)


def make_state_dir(path: Path) -> bool:
    """Make the state folder if it is missing, with a `.gitignore` that keeps it out of git (see
    STATE_GITIGNORE). True when this call made it. A folder that exists is left exactly as it is:
    a user who edited or deleted its `.gitignore` keeps their choice. Raises OSError when the folder
    cannot be made (a file in its place, no permission)."""
    try:
        path.mkdir(parents=True)
    except FileExistsError:
        if not path.is_dir():
            raise
        return False
    try:
        with open(path / ".gitignore", "x", encoding="utf-8") as handle:
            handle.write(STATE_GITIGNORE)
    except OSError:  # the folder is there; a missing ignore file must not stop the command
        pass
    return True


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    """`~/.config/arreio/config.yaml`, honouring `XDG_CONFIG_HOME`."""
    env = process_env() if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".config")
    return Path(base) / "arreio" / "config.yaml"


def user_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """`~/.cache/arreio`, honouring `XDG_CACHE_HOME`: what is worth keeping between runs but can be
    made again (a server's context window)."""
    env = process_env() if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".cache")
    return Path(base) / "arreio"


def display_path(path: Path, cwd: Path | None = None) -> str:
    """A path relative to the working directory when it is inside it (for messages)."""
    cwd = (cwd or Path.cwd()).resolve()
    try:
        return str(path.resolve().relative_to(cwd))
    except ValueError:
        return str(path)


def resolve_below(base: Path, path: str | Path) -> Path:
    """`Path(base, path).resolve()` for a `base` that is already resolved (a run's `cwd` is resolved
    once, when its context is built): only `path`'s own components are looked at, one `lstat` each,
    instead of every component from `/` again (each tool call resolved its path from the
    root of the file system, twice). Any symlink met hands the whole path to `Path.resolve`, so the
    result is the same as that call's, symlinks and `..` included."""
    text = os.fspath(path)
    if text.startswith("/"):
        return Path(text).resolve()
    current = os.fspath(base)
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)  # the parent of a resolved path is resolved
            continue
        step = current + part if current.endswith("/") else current + "/" + part
        try:
            is_link = stat.S_ISLNK(os.lstat(step).st_mode)
        except OSError:  # missing (a file about to be written) or unreadable: joined as written
            is_link = False
        if is_link:
            return Path(base, text).resolve()
        current = step
    return Path(current)

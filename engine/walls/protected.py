"""What the agent's tools never write (docs/architecture.md invariant 10): the one list, and how a rule names a path.

Protected:
- arreio's state folder: `state_dir(cwd, env)` (`$ARREIO_HOME` when set), `.arreio/` in the working
  directory whatever `ARREIO_HOME` says (a later run without it reads that one), and the run's own
  state folder when it was given another way — config, sessions, `audit.jsonl`, skills, memory;
- `.git` in the working directory, whether a folder or a file, and the folder a `.git` file points
  to (worktrees, submodules): git runs `core.fsmonitor`, hooks and aliases from there, so writing it
  is writing code; a `.git` component anywhere below the working directory (a nested repository) too;
- arreio's user config folder, `user_config_path(env).parent` (`$XDG_CONFIG_HOME/arreio/`), and
  `~/.config/arreio/` too (a later run without XDG_CONFIG_HOME reads that one);
- the Python environment arreio runs from (`runtime_places`): its virtualenv and the user's
  site-packages, whose `.pth` files Python runs at every start — a project's `.venv` that holds arreio
  lies in the working directory;
- what the repository's config makes git run or read from the working tree (`git_pointers.py`:
  `core.hooksPath`, includes, a linked `.git/hooks`), a config file's target when it is a link, a
  `.arreio` anywhere below the working directory (the state of a run started in a sub-folder), and —
  when the working directory holds the home folder — the files a shell, git or session runs at
  startup (`startup_files.py`).

Each is protected as written and as resolved (a symlinked `.arreio` protects its target too). A target
is compared after resolution — symlinks followed, `..` folded (`workspace.resolve_in_root`) — and
without regard to case (on macOS and Windows `.GIT/config` is `.git/config`).

A write there is refused, unless a policy rule names it::

    governance:
      policy:
        - {tool: write_file, path: ".git/hooks/pre-commit", action: allow}

Such a rule unlocks a protected path when it is an `allow`, its `tool` matches the writing tool, its
`path` glob matches the resolved target, and the glob's fixed leading folders lie inside the protected
folder: `.git/hooks/*` names `.git`; `**`, `*` or `.g*/**` name nothing and unlock nothing.

`protected_paths(cwd, env)` is the list the OS sandbox makes read-only for `shell`.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from arreio.engine.core.paths import state_dir, user_config_path
from arreio.engine.core.regular_file import open_regular
from arreio.engine.walls.git_pointers import pointed_paths
from arreio.engine.walls.startup_files import STARTUP, startup_paths

if TYPE_CHECKING:
    from arreio.engine.walls.settings import PolicyRule

STATE = "arreio's own state"
GIT = "version control (git runs its config and hooks as code)"
USER_CONFIG = "arreio's user config"
RUNTIME = "the Python environment arreio runs from (what is there runs at arreio's next start)"
_GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Protected:
    """One protected folder or file: where it is (resolved), how a message names it, what it is."""

    root: Path
    shown: str
    what: str


def protected_areas(
    cwd: Path, env: Mapping[str, str], state: Path | None = None, *, cwd_resolved: bool = False
) -> list[Protected]:
    """Every protected place for a run in `cwd` (see the module docstring), resolved, without repeats.
    `cwd_resolved`: the caller resolved `cwd` a moment ago for this same check."""
    cwd = Path(cwd) if cwd_resolved else Path(cwd).resolve()
    resolved = cache(_resolved)  # each place is resolved once a call, not once for each use
    found: list[tuple[Path, str]] = [(state_dir(cwd, env), STATE), (cwd / ".arreio", STATE)]
    if state is not None:
        found.append((Path(state), STATE))
    git = cwd / ".git"
    found.append((git, GIT))
    pointed = _gitdir(git)
    if pointed is not None:
        found.append((pointed, GIT))
    # What the repository's config makes git run or read from the working tree (husky's hooksPath…).
    found += [(place, GIT) for place in pointed_paths(pointed or git, cwd)]
    home = Path(env.get("HOME") or str(Path.home()))
    user_configs = [user_config_path(env), user_config_path({"HOME": str(home)})]
    found.append((user_configs[0].parent, USER_CONFIG))
    # A later run may not set XDG_CONFIG_HOME as this one does: ~/.config/arreio/ is read then.
    found.append((user_configs[1].parent, USER_CONFIG))
    # A config file that is a link (a dotfiles repository, versioned settings): what it points to is the config.
    for config in [*user_configs, state_dir(cwd, env) / "config.yaml", cwd / ".arreio" / "config.yaml"]:
        if os.path.islink(config):
            found.append((resolved(config), USER_CONFIG if config in user_configs else STATE))
    if _within(home, cwd):  # the agent can write the home folder: what runs at the next login or shell
        found += [(place, STARTUP) for place in startup_paths(home)]
    # The Python environment arreio runs from: a `.pth` file or a changed module there would run on
    # the host at arreio's next start (a project's `.venv` holding arreio is inside the working directory).
    found += [(place, RUNTIME) for place in runtime_places() if not _within(cwd, resolved(place))]
    # A state folder that holds the working directory itself (`ARREIO_HOME` set to a parent of the
    # project) cannot be protected whole — every write would be refused — so its own entries are.
    found = [
        (entry, what)
        for place, what in found
        for entry in (_state_entries(place) if what == STATE and _within(cwd, resolved(place)) else [place])
    ]
    out: list[Protected] = []
    for place, what in found:
        for variant in (Path(os.path.abspath(place)), resolved(place)):
            if not any(_same(variant, p.root) for p in out):
                out.append(Protected(variant, _shown(variant, cwd, env), what))
    return out


@cache
def runtime_places() -> tuple[Path, ...]:
    """The virtualenv arreio runs in (none for a system install) and the user's site-packages, where
    Python runs `.pth` files at every start."""
    import site
    import sys

    places = [Path(sys.prefix)] if sys.prefix != sys.base_prefix else []
    try:
        places.append(Path(site.getusersitepackages()))
    except (AttributeError, OSError):  # a Python built without user site support
        pass
    return tuple(places)


def protected_paths(cwd: Path, env: Mapping[str, str], state: Path | None = None) -> list[Path]:
    """The paths the agent may not write — for the OS sandbox, which makes them read-only for shell.
    Nested `.git` folders below `cwd` are not listed (finding them means walking the tree)."""
    return [p.root for p in protected_areas(cwd, env, state)]


def protecting(target: Path, cwd: Path, env: Mapping[str, str], state: Path | None = None) -> Protected | None:
    """The protected place `target` (absolute, resolved) is in, or None."""
    cwd = Path(cwd).resolve()
    for area in protected_areas(cwd, env, state, cwd_resolved=True):
        if _within(target, area.root):
            return area
    if _within(target, cwd):
        parts = _below(target, cwd)
        for i, part in enumerate(parts):
            if part.casefold() in (".git", ".arreio"):  # a nested repository, or a run's state in a sub-folder
                nested = cwd.joinpath(*parts[: i + 1])
                return Protected(
                    nested, posixpath.join(*parts[: i + 1]) + "/", GIT if part.casefold() == ".git" else STATE
                )
    return None


def refusal(area: Protected) -> str:
    """What the model (and the person reading the journal) is told."""
    return f"refused: {area.shown} is {area.what}; the agent's tools cannot write it"


def write_refusal(
    tool: str, target: Path, cwd: Path, env: Mapping[str, str], rules: Iterable[PolicyRule], state: Path | None = None
) -> str | None:
    """Why `tool` may not write `target` (absolute, resolved), or None: not protected, or a policy
    rule names the path (module docstring)."""
    area = protecting(target, cwd, env, state)
    if area is None or any(unlocks(rule, tool, target, cwd, env, area) for rule in rules):
        return None
    return refusal(area)


def unlocks(rule: PolicyRule, tool: str, target: Path, cwd: Path, env: Mapping[str, str], area: Protected) -> bool:
    """Whether `rule` is an explicit allow for writing `target` inside the protected `area`."""
    if rule.action != "allow" or not rule.path or not fnmatchcase(tool, rule.tool):
        return False
    if not path_matches(rule.path, target, cwd, env):
        return False
    return _within(_fixed_part(rule.path, cwd, env), area.root)


def path_matches(pattern: str, target: Path, cwd: Path, env: Mapping[str, str]) -> bool:
    """A rule's `path` glob against a resolved target. Relative globs are read from `cwd`, `~/` from
    the home folder; `*` stays within one folder, `**` crosses folders, a trailing `/` means
    everything below; case is ignored."""
    base = _fixed_part(pattern, cwd, env)
    rest = _glob_rest(pattern)
    if not _within(target, base):
        return False
    relative = "/".join(_below(target, base))
    if not rest:
        return relative == "" or pattern.endswith("/")
    return _glob_regex(rest, pattern.endswith("/")).fullmatch(relative.casefold()) is not None


def relative_or_absolute(target: Path, cwd: Path, *, cwd_resolved: bool = False) -> str:
    """`target` as a rule's subject: relative to `cwd` (POSIX) when inside it, else absolute.
    `cwd_resolved`: the caller resolved `cwd` a moment ago for this same check."""
    cwd = Path(cwd) if cwd_resolved else Path(cwd).resolve()
    if _within(target, cwd):
        return "/".join(_below(target, cwd)) or "."
    return target.as_posix()


# -- helpers ------------------------------------------------------------------------------------
def _split(pattern: str, env: Mapping[str, str]) -> tuple[Path | None, list[str]]:
    text = pattern.replace("\\", "/")
    if text.startswith("~/") or text == "~":
        home = env.get("HOME") or str(Path.home())
        text = home.rstrip("/") + text[1:]
    absolute = text.startswith("/")
    parts = [p for p in posixpath.normpath(text).split("/") if p not in ("", ".")]
    return (Path("/") if absolute else None), parts


def _fixed_part(pattern: str, cwd: Path, env: Mapping[str, str]) -> Path:
    anchor, parts = _split(pattern, env)
    fixed = []
    for part in parts:
        if _GLOB.search(part):
            break
        fixed.append(part)
    return _resolved((anchor or Path(cwd).resolve()).joinpath(*fixed))


def _glob_rest(pattern: str) -> str:
    _, parts = _split(pattern, {"HOME": "/"})
    index = next((i for i, p in enumerate(parts) if _GLOB.search(p)), len(parts))
    return "/".join(parts[index:])


def _glob_regex(glob: str, below: bool) -> re.Pattern[str]:
    out, i = [], 0
    glob = glob.casefold()
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and (end := glob.find("]", i + 2)) > 0:
            body = glob[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + ("(?:/.*)?" if below else ""), re.DOTALL)


def _gitdir(git: Path) -> Path | None:
    """The folder a `.git` *file* points to (`gitdir: …`), resolved against its folder."""
    try:  # a regular file only, and its first line only: a pipe named `.git` is not waited on
        fd, _ = open_regular(git)
        try:
            head = os.read(fd, 4096)
        finally:
            os.close(fd)
    except OSError:
        return None
    first = head.decode("utf-8", errors="replace").splitlines()[:1]
    if not first or not first[0].startswith("gitdir:"):
        return None
    return git.parent / first[0].split(":", 1)[1].strip()


# What arreio keeps in a state folder (docs/architecture.md section 7).
STATE_ENTRIES = (
    "config.yaml",
    "sessions",
    "runs",
    "MEMORY.md",
    "USER.md",
    "memory",
    "skills",
    "knowledge.sqlite",
    "audit.jsonl",
    "checkpoints",
    "batches",
    "logs",
    "context_calibration.json",
)


def _state_entries(folder: Path) -> list[Path]:
    return [Path(folder) / name for name in STATE_ENTRIES]


def _resolved(path: Path) -> Path:
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return Path(os.path.abspath(path))


def _within(path: Path, root: Path) -> bool:
    """`path` is `root` or below it, comparing names without regard to case."""
    path, root = _pure(path), _pure(root)
    if not (path.is_absolute() and root.is_absolute()):
        return [p.casefold() for p in path.parts[: len(root.parts)]] == [p.casefold() for p in root.parts]
    # pathlib writes an absolute path with single separators and no trailing one (but the root), and
    # case-folding never makes or takes a "/", so a string prefix on a "/" boundary is a parts prefix.
    # Strings, not parts: this runs ~30 times for every write the agent makes.
    a, b = str(path).casefold(), str(root).casefold()
    return a == b or a.startswith(b if b.endswith("/") else b + "/")


def _below(path: Path, root: Path) -> tuple[str, ...]:
    """The names of `path` under `root` (which `_within` said holds it)."""
    return _pure(path).parts[len(_pure(root).parts) :]


def _same(a: Path, b: Path) -> bool:
    return _within(a, b) and len(_pure(a).parts) == len(_pure(b).parts)


def _pure(path: Path | str) -> PurePath:
    # A Path keeps its parts once worked out; wrapping it again would parse it again.
    return path if isinstance(path, PurePath) else Path(path)


def _shown(place: Path, cwd: Path, env: Mapping[str, str]) -> str:
    if _within(place, cwd) and _below(place, cwd):
        return "/".join(_below(place, cwd)) + "/"
    home = env.get("HOME")
    if home and _within(place, Path(home)) and _below(place, Path(home)):
        return "~/" + "/".join(_below(place, Path(home))) + "/"
    return place.as_posix() + "/"

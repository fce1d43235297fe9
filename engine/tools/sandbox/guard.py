"""What a sandboxed call must not leave behind: a `.git` anywhere below the working directory (or a
folder git would take for one: HEAD, objects/ and refs/ — a bare repository), or a protected path that
did not exist when the call began.

bubblewrap can only make read-only what exists. A missing state folder or user config folder is made
before the call (`plan.py`) and mounted read-only; what cannot be made ahead — `.git` (an empty one
would break git for the repository around the working directory), the entries of a state folder that
is the working directory itself — is checked after the call instead: anything of the kind that
appeared during it is moved out of the working tree into the state folder (`refused/<run>/`), where
neither git nor a later run looks, and the model is told. Nothing of the call's runs by then (the
sandbox's PID namespace ended with it), so there is no race with the command.

A `.git` made in a sub-folder (or a `.git` file, `gitdir: …`) would let the user's next `git status`
there run its `core.fsmonitor`. Finding one means looking at every folder: `GitWatch` lists a folder
once and afterwards only stats it — creating, removing or renaming an entry changes a folder's
change time, which no one can set back — so a call costs one `stat` per folder.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAX_DIRS = 200_000  # folders looked at per scan, at most; past it the watch says it is partial
# Names no call may create below the working directory: a repository git would use, and the state
# folder (with its config.yaml) a run started in that sub-folder would obey.
PLANTED_NAMES = frozenset({".git", ".arreio"})
# Files git reads wherever it walks: one that is a FIFO (or a device) blocks git — and with it the
# checkpoint after the call — until something writes to it. Such a file the call made is moved away.
GIT_READS = frozenset({".gitignore", ".gitattributes", ".gitmodules", ".mailmap"})


@dataclass
class _Folder:
    stamp: tuple[int, int, int, int]
    subdirs: tuple[str, ...]
    gits: tuple[str, ...]
    is_gitdir: bool = False  # the folder itself is a repository's git folder (a bare repository)


# What git takes for a git folder when it finds one while looking for a repository: a folder holding
# HEAD, objects/ and refs/ is used as a (bare) repository, its config obeyed, with no `.git` in sight.
_GITDIR_NAMES = frozenset({"HEAD", "objects", "refs"})


class GitWatch:
    """Every `.git` and `.arreio` (folder, file or link) at or below `root`, and every folder shaped as
    a git folder, found incrementally (module docstring)."""

    def __init__(self, root: Path, max_dirs: int = MAX_DIRS) -> None:
        self.root = str(root)
        self.max_dirs = max_dirs
        self.partial = False
        self._known: dict[str, _Folder] = {}
        self._found: set[str] | None = None

    def scan(self) -> set[str]:
        found: set[str] = set()
        seen: dict[str, _Folder] = {}
        stack = [self.root]
        self.partial = False
        while stack:
            if len(seen) >= self.max_dirs:
                self.partial = True
                break
            folder = stack.pop()
            entry = self._look(folder)
            if entry is None:
                continue
            seen[folder] = entry
            if entry.is_gitdir and folder != self.root:
                found.add(folder)
                continue  # its insides are git's
            found.update(os.path.join(folder, name) for name in entry.gits)
            stack.extend(os.path.join(folder, name) for name in entry.subdirs)
        self._known = seen
        self._found = found
        return found

    def known(self) -> set[str]:
        """What the last scan found (a first scan when there was none)."""
        return self._found if self._found is not None else self.scan()

    def _look(self, folder: str) -> _Folder | None:
        try:
            info = os.lstat(folder)
        except OSError:
            return None
        stamp = (info.st_ino, info.st_ctime_ns, info.st_mtime_ns, info.st_nlink)
        known = self._known.get(folder)
        if known is not None and known.stamp == stamp:
            return known
        subdirs: list[str] = []
        gits: list[str] = []
        names: set[str] = set()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    names.add(entry.name)
                    if entry.name.casefold() in PLANTED_NAMES:
                        gits.append(entry.name)
                        continue
                    if entry.name in GIT_READS and _special(entry):
                        gits.append(entry.name)
                        continue
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            subdirs.append(entry.name)
                    except OSError:
                        continue
        except OSError:
            return None
        return _Folder(stamp, tuple(subdirs), tuple(gits), _GITDIR_NAMES <= names)


@dataclass
class Before:
    """What a call began with: the watched paths that were absent, and the `.git`s there were."""

    absent: list[Path]
    gits: set[str]
    links: dict[Path, str] = field(default_factory=dict)  # protected links as they were: path → target


@dataclass
class PlantGuard:
    """One run's guard. `watched`: protected paths that may not appear (absent now or not);
    `refused`: the folder things that appear are moved into."""

    cwd: Path
    watched: Sequence[Path]
    refused: Path
    links: Sequence[Path] = ()  # protected places that are links in a writable area (`.arreio -> …`)
    git: GitWatch = field(init=False)
    _moved: itertools.count = field(init=False, default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.git = GitWatch(self.cwd)

    def before(self) -> Before:
        links = {}
        for link in self.links:
            try:
                links[link] = os.readlink(link)
            except OSError:
                continue
        return Before([p for p in self.watched if not os.path.lexists(p)], self.git.scan(), links)

    def after(self, before: Before) -> list[str]:
        """Move away what appeared during the call; one line for the model per thing moved."""
        said = self._relink(before)
        appeared = [p for p in before.absent if os.path.lexists(p)]
        appeared += [Path(p) for p in sorted(self.git.scan() - before.gits)]
        for path in appeared:
            shown = _shown(path, self.cwd)
            where = self._move(path)
            said.append(
                f"refused: {shown} may not be created by the agent (git or a later run would obey it); "
                + (
                    f"it was moved out of the working directory to {where}"
                    if where
                    else "it could not be moved away and was deleted"
                )
            )
        return said

    def _relink(self, before: Before) -> list[str]:
        """A protected link (`.arreio -> /state`) the call removed or replaced is put back, and what
        took its place is moved away: the mount held the target, not the link in the tree."""
        said = []
        for link, target in before.links.items():
            try:
                now = os.readlink(link)
            except OSError:
                now = None
            if now == target:
                continue
            where = self._move(link) if os.path.lexists(link) else None
            try:
                os.symlink(target, link)
            except OSError:
                continue
            said.append(
                f"refused: {_shown(link, self.cwd)} is a protected link; it was put back"
                + (f" (what replaced it was moved to {where})" if where else "")
            )
        return said

    def _move(self, path: Path) -> str | None:
        target = self.refused / str(next(self._moved)) / path.name
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(path), str(target))
            return str(target)
        except OSError:
            _remove(path)
            return None


def _special(entry: os.DirEntry) -> bool:
    """Neither a regular file, a folder nor a link: a FIFO, a socket, a device."""
    try:
        return not (entry.is_file(follow_symlinks=False) or entry.is_dir(follow_symlinks=False) or entry.is_symlink())
    except OSError:
        return False


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError:
        pass


def _shown(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)

"""The shadow repository: content-addressed snapshots of a working tree, kept under the state folder.

`<state>/checkpoints/git/` is a git directory of its own; every command runs with `GIT_DIR` there and
`GIT_WORK_TREE` = the working directory, so the user's own `.git` (if any) is never read or written,
and nothing lands in their history. Git gives content-addressed storage (an unchanged file costs
nothing), a stat cache (an unchanged tree is checked in milliseconds) and `.gitignore` for free.

Nothing of the user's or the repository's git setup runs: no system or global config (`HOME` is the
state folder), no hooks, no fsmonitor, no filters, no line-ending conversion (`info/attributes`
unsets them for every path, so a snapshot is the bytes on disk and a restore writes them back).

Each working tree has its own git index (the stat cache) under `trees/<key>/`, with its own excludes:
the state folder and, per snapshot, files over the size cap and secrets files (`secret_files.py`:
`.env`, private keys, credentials) — those are listed, never dropped silently.
Once a run changes a `.gitignore` its snapshots keep to the rules its first checkpoint holds
(`ignore_rules.py`): a run cannot hide its own files from undo, nor show a user's ignored ones.
A path behind a symlinked folder is not in the tree (the link is): a file is never read through a link.
A snapshot is `ls-files` (what changed since the last one) → `update-index` on those paths only →
`write-tree`; `git add -A` would hash an oversized file before we could refuse it.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arreio.engine.checkpoints.ignore_rules import NAME as IGNORE_FILE
from arreio.engine.checkpoints.ignore_rules import anchored, escaped, files_in_tree
from arreio.engine.checkpoints.secret_files import SECRET_FILE_WHY, forget_kept_copies, is_secret_file
from arreio.engine.checkpoints.shadow_git import CheckpointError, ShadowGit, tree_key
from arreio.engine.checkpoints.store_lock import clear_stale_git_locks
from arreio.engine.checkpoints.trees import Delta, Entry, TreeReading
from arreio.engine.core.programs import trusted_which

__all__ = ["CheckpointError", "Delta", "Entry", "ShadowRepo", "Snapshot", "find_git", "tree_key"]

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
TREE_REF = "refs/arreio/trees/"
# More new files than this in one snapshot go straight into one pack (git's bulk check-in): on a slow
# disk a loose object per file costs ~1 ms of file creation, a 5,000-file tree ~6 s instead of ~1.5 s.
BULK_FILES = 64
# Highest precedence of all attribute files: no conversion of any kind, on the way in or out.
_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding -crlf\n"

IGNORED_WHY = "ignored by .gitignore"


def _regular(path: Path) -> os.stat_result | None:
    """`lstat` of a regular file; None for anything else, or nothing."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def find_git(env: Mapping[str, str], untrusted: Sequence[Path] = ()) -> str | None:
    """The git executable on the run's PATH, in an entry the agent cannot write (`untrusted`: the
    working directory and the sandbox's writable roots; `engine/core/programs.py`), or None (checkpoints
    are then off, with a warning). A `.venv/bin/git` the agent wrote never runs on the host."""
    if env.get("PATH") is None:
        env = {**env, "PATH": os.defpath}
    return trusted_which("git", env, untrusted)


@dataclass
class Snapshot:
    """The tree a snapshot wrote, and the files left out of it: path → [size, mtime_ns, why]."""

    tree: str
    skipped: dict[str, list] = field(default_factory=dict)


class ShadowRepo(ShadowGit, TreeReading):
    """Snapshots of `worktree` in the shadow repository of `state_dir`. Writers hold `lock()` (one
    lock for the whole store: a prune must never run while a snapshot's objects are unreferenced)."""

    def __init__(
        self,
        state_dir: Path,
        worktree: Path,
        *,
        git: str,
        max_file_bytes: int,
        path_env: str | None = None,
        durable: bool = True,
        untrusted: Sequence[Path] = (),
    ) -> None:
        super().__init__(state_dir, worktree, git=git, path_env=path_env, durable=durable, untrusted=untrusted)
        self.max_file_bytes = max_file_bytes
        self._tracked: set[str] = set()  # watched paths the index holds (`_ignored`)
        self._pinned: set[str] = set()  # first trees of runs that changed a .gitignore: their rules stand
        self._ready = False

    def ensure(self) -> None:
        """Create the shadow repository and this tree's folder on first use (call under `lock()`)."""
        if self._ready:
            return
        if not (self.git_dir / "HEAD").exists():
            # A store made afresh (the first, or one deleted by hand): the trees' stat caches name
            # objects of a store that is gone, and a commit of their tree failed for every later run.
            shutil.rmtree(self.root / "trees", ignore_errors=True)
            self.root.mkdir(parents=True, exist_ok=True)
            # Init without a work tree (that would write core.worktree, and trees share the store).
            self.run_git(
                "init",
                "--bare",
                "--quiet",
                "--template=",
                str(self.git_dir),
                env={"GIT_WORK_TREE": "", "GIT_DIR": ""},
                cwd=self.root,
            )
            self.run_git("config", "core.bare", "false")
            (self.git_dir / "info").mkdir(exist_ok=True)
            (self.git_dir / "info" / "attributes").write_text(_ATTRIBUTES)
        self.tree_dir.mkdir(parents=True, exist_ok=True)
        (self.tree_dir / "worktree").write_text(str(self.worktree) + "\n")
        self.exclude_file.write_text(self._excludes())
        clear_stale_git_locks(self.tree_dir, self.git_dir)
        self._ready = True
        forget_kept_copies(self)  # once per tree: what an older arreio kept

    def _excludes(self) -> str:
        lines = ["# written by arreio: never snapshot the state folder or git's own", "/.git/"]
        if self.state_dir != self.worktree and self.state_dir.is_relative_to(self.worktree):
            lines.append("/" + escaped(self.state_dir.relative_to(self.worktree).as_posix()) + "/")
        return "\n".join(lines) + "\n"

    # -- snapshots ----------------------------------------------------------------------------------
    def snapshot(self, *, keep: bool = True, watch: Sequence[str] = (), rules_from: str | None = None) -> Snapshot:
        """Write the working tree as it is now into the store; returns its tree id (call under lock).
        `keep=False`: the caller references the tree itself (`tree_ref`), in the same `set_refs`.
        `watch`: paths (relative to the working tree) a file tool writes; one that `.gitignore`
        keeps out of the snapshot is listed in `skipped`, so the run says undo cannot restore it.
        `rules_from`: the tree of the run's first checkpoint; once the run changes a `.gitignore`,
        the rules that tree holds decide what is left out (module docstring)."""
        self.ensure()
        try:
            snap = self._snapshot(rules_from)
        except CheckpointError:
            # A torn or stale stat cache (a killed git, a pruned object) is only a cache: rebuild it.
            self.index_file.unlink(missing_ok=True)
            (self.tree_dir / "tree").unlink(missing_ok=True)
            snap = self._snapshot(rules_from)
        if watch:
            self._ignored(watch, snap.skipped)
        if keep:
            self.keep(snap.tree)
        return snap

    def _ignored(self, watch: Sequence[str], skipped: dict[str, list]) -> None:
        """Adds to `skipped` each watched file that exists but is not in the snapshot (ignored). Git is
        asked only about an existing file the index is not known to hold."""
        present = {
            rel: info
            for rel in watch
            if rel not in self._tracked and rel not in skipped and (info := _regular(self.worktree / rel)) is not None
        }  # one not there has nothing to restore
        if present:
            tracked = self.run_git("ls-files", "-z", "--", *present, env={"GIT_LITERAL_PATHSPECS": "1"})
            self._tracked.update(os.fsdecode(p) for p in tracked.split(b"\0") if p)
        for rel, info in present.items():
            if rel not in self._tracked:
                skipped[rel] = [info.st_size, info.st_mtime_ns, IGNORED_WHY]

    def _listing(self, rules_from: str | None) -> list[bytes]:
        """What changed since the index, each "<tag> <path>" (`?`: untracked and not ignored)."""
        args = ("ls-files", "-z", "-t", "--others", "--modified", "--deleted")
        listed = self.run_git(*args, *self._excludes_for(rules_from))
        if (
            rules_from is not None
            and rules_from not in self._pinned
            and any(p[2:].rsplit(b"/", 1)[-1] == IGNORE_FILE.encode() for p in listed.split(b"\0"))
        ):
            self._pinned.add(rules_from)  # the run changed a .gitignore: from now on its first rules stand
            listed = self.run_git(*args, *self._excludes_for(rules_from))
        return [p for p in listed.split(b"\0") if len(p) > 2]

    def _excludes_for(self, rules_from: str | None) -> list[str]:
        if rules_from is None or rules_from not in self._pinned:
            return ["--exclude-standard"]
        kept = self.tree_dir / f"ignore-{rules_from}"
        if not kept.exists():
            kept.write_bytes(anchored(files_in_tree(self.run_git, rules_from)))
        return [f"--exclude-from={self.exclude_file}", f"--exclude-from={kept}"]

    def _behind_link(self, rel: str, folders: dict[str, bool]) -> str | None:
        """The first folder on the way to `rel` that is a symlink (None when every one is a real
        folder, or missing): what lies behind it is not in the tree."""
        at = ""
        for part in rel.split("/")[:-1]:
            at = f"{at}/{part}" if at else part
            if at not in folders:
                try:
                    folders[at] = stat.S_ISLNK(os.lstat(self.worktree / at).st_mode)
                except OSError:
                    folders[at] = False
            if folders[at]:
                return at
        return None

    def _snapshot(self, rules_from: str | None = None) -> Snapshot:
        entries = self._listing(rules_from)
        untracked = {p[2:] for p in entries if p[:1] == b"?"}
        add, remove, skipped = [], [], {}
        folders: dict[str, bool] = {}
        for raw in dict.fromkeys(p[2:] for p in entries):
            rel = os.fsdecode(raw)
            if rel.endswith("/"):  # a folder with its own .git: git will not look inside it
                skipped[rel] = [0, 0, "a nested git repository"]
                continue
            link = self._behind_link(rel, folders)
            if link is not None:  # a folder swapped for a link: its files are gone, the link is new
                remove.append(raw)
                add.append(os.fsencode(link))
                continue
            try:
                info = os.lstat(self.worktree / rel)
            except (FileNotFoundError, NotADirectoryError):  # gone, or a folder on its way is a file now
                remove.append(raw)
                continue
            except OSError as error:
                skipped[rel] = [0, 0, f"unreadable ({error.strerror})"]
                remove.append(raw)
                continue
            if stat.S_ISLNK(info.st_mode):
                add.append(raw)
            elif stat.S_ISDIR(info.st_mode):
                remove.append(raw)  # a file that became a folder: its files are listed on their own
            elif not stat.S_ISREG(info.st_mode):
                skipped[rel] = [info.st_size, info.st_mtime_ns, "not a regular file"]
                remove.append(raw)
            elif info.st_size > self.max_file_bytes:
                skipped[rel] = [info.st_size, info.st_mtime_ns, f"{info.st_size / 1048576:.1f} MB, over max_file_mb"]
                remove.append(raw)
            elif is_secret_file(self.worktree / rel):
                skipped[rel] = [info.st_size, info.st_mtime_ns, SECRET_FILE_WHY]
                if raw not in untracked:  # kept before (a `.pem` that held a certificate): out of the index
                    remove.append(raw)
            else:
                add.append(raw)
        if remove:
            self.run_git("update-index", "--force-remove", "-z", "--stdin", stdin=b"\0".join(remove) + b"\0")
            self._tracked.difference_update(os.fsdecode(raw) for raw in remove)
        if add:
            add = list(dict.fromkeys(add))
            self._add(add, skipped)
            self._tracked.update(rel for rel in map(os.fsdecode, add) if rel not in skipped)
        tree = None if add or remove else self._cached_tree()
        if tree is None:
            tree = self.run_git("write-tree").decode().strip()
            self._cache_tree(tree)
        return Snapshot(tree=tree, skipped=skipped)

    def _index_stamp(self) -> str:
        info = os.stat(self.index_file)
        return f"{info.st_mtime_ns} {info.st_size} {info.st_ino}"

    def _cached_tree(self) -> str | None:
        """The tree the stat cache described when last written — valid while the cache file is
        untouched since (any change to it changes its mtime, size or inode)."""
        try:
            tree, stamp = (self.tree_dir / "tree").read_text().split(" ", 1)
            return tree if stamp == self._index_stamp() else None
        except (OSError, ValueError):
            return None

    def _cache_tree(self, tree: str) -> None:
        try:
            (self.tree_dir / "tree").write_text(f"{tree} {self._index_stamp()}")
        except OSError:
            pass  # only a shortcut

    @property
    def tree_ref(self) -> str:
        return TREE_REF + self.key

    def keep(self, tree: str) -> None:
        """Reference the tree the stat cache now describes, so a prune never takes blobs it points at
        (refs stay loose — the store never packs refs — so the file is the ref)."""
        try:
            if (self.git_dir / self.tree_ref).read_text().strip() == tree:
                return
        except OSError:
            pass
        self.run_git("update-ref", self.tree_ref, tree)

    def _add(self, paths: list[bytes], skipped: dict[str, list]) -> None:
        bulk = ["-c", "core.bigFileThreshold=1"] if len(paths) > BULK_FILES else []
        try:
            # --replace: a folder swapped for a link (or a file) drops the entries that were inside it
            self.run_git(
                *bulk,
                "update-index",
                "--add",
                "--remove",
                "--replace",
                "-z",
                "--stdin",
                stdin=b"\0".join(paths) + b"\0",
            )
        except CheckpointError:
            # One bad path (unreadable, behind a symlink) fails the batch: find it, keep the rest.
            for raw in paths:
                try:
                    self.run_git("update-index", "--add", "--remove", "--replace", "-z", "--stdin", stdin=raw + b"\0")
                except CheckpointError as error:
                    skipped[os.fsdecode(raw)] = [0, 0, str(error)[:120]]
                    self.run_git("update-index", "--force-remove", "-z", "--stdin", stdin=raw + b"\0")

    def commit(self, tree: str, parent: str | None, message: str) -> str:
        args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
        return self.run_git(*args).decode().strip()

    def set_refs(self, refs: Mapping[str, str]) -> None:
        """Point each ref at its object (a run's newest commit; a tree's last snapshot), so a prune keeps them."""
        lines = "".join(f"update {name} {sha}\n" for name, sha in refs.items())
        if lines:
            self.run_git("update-ref", "--stdin", stdin=lines.encode())

    def delete_refs(self, names: Sequence[str]) -> None:
        if names:
            self.run_git("update-ref", "--stdin", stdin="".join(f"delete {n}\n" for n in names).encode())

    def refs(self, prefix: str = "refs/arreio/") -> dict[str, str]:
        out = self.run_git("for-each-ref", "--format=%(refname) %(objectname)", prefix).decode()
        return {name: sha for name, sha in (line.split(" ", 1) for line in out.splitlines() if " " in line)}

    def prune_objects(self) -> None:
        """Drop objects no ref reaches any more: repack what is reachable into one pack (no delta
        search: fast), then delete the unreachable loose objects."""
        self.run_git("repack", "-a", "-d", "-q", "--window=0")
        self.run_git("prune", "--expire=now")

    def size_bytes(self) -> int:
        out = self.run_git("count-objects", "-v").decode()
        kib = {k: int(v) for k, v in re.findall(r"^(size|size-pack): (\d+)$", out, re.MULTILINE)}
        return (kib.get("size", 0) + kib.get("size-pack", 0)) * 1024

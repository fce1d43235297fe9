"""Git, as the shadow repository runs it: every command with `GIT_DIR` under the state folder and
`GIT_WORK_TREE` the working directory, none of the user's or the repository's configuration (`HOME`
is the state folder, no system or global config, the `-c` flags below on every command line), in a
session of its own, under a timeout. store.py builds the snapshots on top of it."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from arreio.engine.checkpoints.store_lock import StoreLock
from arreio.engine.core.errors import ArreioError
from arreio.engine.core.parent_death import die_with_us
from arreio.engine.core.ports import process_env
from arreio.engine.core.programs import trusted_path

ROOT = "checkpoints"
# Every command line carries these, so a config we did not write cannot change what git does.
_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.quotepath=off",
    "core.looseCompression=1",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "gc.auto=0",
    "core.logAllRefUpdates=false",
    "core.compression=1",
    "commit.gpgsign=false",
    "safe.directory=*",
    "core.pager=cat",
    "color.ui=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.renames=false",
    "advice.detachedHead=false",
)
GIT_TIMEOUT_S = 300  # a hung git (a dead network mount) must not hang the run: the checkpoint fails, said once


class CheckpointError(ArreioError):
    """A git command failed (its stderr, one line); exit 1 when a command meets it."""


def tree_key(worktree: Path) -> str:
    """The working tree's folder name under `trees/` (its index and excludes)."""
    return hashlib.sha256(str(worktree).encode()).hexdigest()[:16]


class ShadowGit:
    """The shadow repository of `state_dir` for `worktree`: where its parts live, and `run_git`.
    Writers hold `lock()` (one lock for the whole store)."""

    def __init__(
        self,
        state_dir: Path,
        worktree: Path,
        *,
        git: str,
        path_env: str | None = None,
        durable: bool = True,
        untrusted: Sequence[Path] = (),
    ) -> None:
        self.state_dir, self.worktree, self.git = state_dir.resolve(), worktree.resolve(), git
        # `fsync: false` reaches git too (`core.fsync=none`; an older git ignores the key).
        self._fsync_flags = () if durable else ("-c", "core.fsync=none")
        self.root = self.state_dir / ROOT
        self.git_dir = self.root / "git"
        self.key = tree_key(self.worktree)
        self.tree_dir = self.root / "trees" / self.key
        self.index_file = self.tree_dir / "index"
        self.exclude_file = self.tree_dir / "exclude"
        self.calls = 0  # git processes started (the read-only-round test counts them)
        path = path_env if path_env is not None else process_env().get("PATH", os.defpath)
        self._env = {
            # git looks up its helpers on PATH: only the entries the agent cannot write
            "PATH": trusted_path({"PATH": path}, [self.worktree, *untrusted]),
            "HOME": str(self.state_dir),
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.worktree),
            "GIT_INDEX_FILE": str(self.index_file),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            "LC_ALL": "C",
            "GIT_AUTHOR_NAME": "arreio",
            "GIT_AUTHOR_EMAIL": "checkpoints@arreio.invalid",
            "GIT_COMMITTER_NAME": "arreio",
            "GIT_COMMITTER_EMAIL": "checkpoints@arreio.invalid",
        }
        self._lock = StoreLock(self.root / "lock")

    def run_git(
        self,
        *args: str,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        writes_tree: bool = False,
    ) -> bytes:
        """One git command in the shadow repository (an `env` value "" drops that variable); a failure
        is a `CheckpointError`. `writes_tree`: it writes the user's working tree (undo's restore)."""
        self.calls += 1
        env = {k: v for k, v in {**self._env, **(env or {})}.items() if v != ""}
        flags = [part for item in _CONFIG for part in ("-c", item)]
        flags += ["-c", f"core.excludesFile={self.exclude_file}", *self._fsync_flags]
        # Its own session: a Ctrl-C at the terminal must not kill git halfway through writing its index.
        # Nor may it race the next arreio once this one is killed: a git started under the store's lock
        # holds the lock too (so a leftover is waited for), and the one writing the working tree dies
        # with arreio (Linux). Only that one: the hook costs a fork for a vfork, ~5 ms a git.
        try:
            proc = subprocess.run(
                [self.git, *flags, *args],
                input=stdin,
                capture_output=True,
                cwd=cwd or self.worktree,
                env=env,
                start_new_session=True,
                check=False,
                timeout=GIT_TIMEOUT_S,
                pass_fds=self._lock.pass_fds,
                preexec_fn=die_with_us() if writes_tree else None,
            )
        except subprocess.TimeoutExpired:
            raise CheckpointError(f"git {args[0]} took longer than {GIT_TIMEOUT_S} s") from None
        if proc.returncode != 0:
            detail = " ".join(proc.stderr.decode(errors="replace").split())[:300]
            raise CheckpointError(f"git {args[0]} failed: {detail or f'exit {proc.returncode}'}")
        return proc.stdout

    def lock(self) -> AbstractContextManager[None]:
        return self._lock.held()

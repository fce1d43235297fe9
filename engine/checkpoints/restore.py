"""`arreio undo`: take the working tree back to before a run (or to a checkpoint), byte for byte.

`prepare_undo` snapshots the tree as it is now and plans (`plan.plan_undo`: pure): what the run
changed and is still as the run left it is restored; what was changed again since is a conflict,
touched only with --force. `apply_undo` is checkpointed like a run of its own (`undo-…`), so an undo
can be undone; it re-checks that the tree did not change while the plan was shown, verifies every
restored path against the target afterwards, and journals the undo in the audit log.

What it deletes, moves or writes it reaches only through real folders: a path whose folder on the way
is a symlink (the agent swapped `d/` for a link to `.git`) is not deleted, and a link that stands
where a file goes is removed itself, never what it points at. Nothing inside a `.git` folder or the
state folder is ever touched. A file the target holds whose place the run filled with something no
checkpoint takes (grown past `max_file_mb`, a FIFO) goes back too: what stands there is moved aside,
into `<state>/checkpoints/aside/<undo id>/`, never opened.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arreio.engine.checkpoints.history import (
    changed_outside_runs,
    find_checkpoint,
    find_run,
    gone_from_store,
    latest_state,
    left_state,
    run_skipped,
)
from arreio.engine.checkpoints.index import CheckpointIndex, skipped_of
from arreio.engine.checkpoints.plan import UndoPlan, plan_undo, relevant_skipped
from arreio.engine.checkpoints.recorder import Recorder
from arreio.engine.checkpoints.store import CheckpointError, ShadowRepo, Snapshot
from arreio.engine.core.errors import ArreioError
from arreio.engine.core.ids import new_id
from arreio.engine.core.ports import Clock


class Journal(Protocol):
    def append(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]: ...


class TreeChanged(ArreioError):
    """The working tree changed between the plan and its application: nothing was changed (exit 1)."""


@dataclass
class PreparedUndo:
    """What an undo would do. `undoing` names it for people ("run run-…", "checkpoint ck-…")."""

    repo: ShadowRepo
    index: CheckpointIndex
    undoing: str
    undid: str  # the run id or checkpoint id undone
    target_id: str
    target: str  # tree
    current: Snapshot
    plan: UndoPlan
    notes: list[str] = field(default_factory=list)


@dataclass
class UndoResult:
    undo_id: str
    before: str  # checkpoint of the tree just before the undo: `undo --run <undo_id>` goes back to it
    after: str
    done: list[dict[str, str]] = field(default_factory=list)  # {"path", "kind"}
    forced: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    moved: dict[str, str] = field(default_factory=dict)  # path → where what stood there was moved aside


def prepare_undo(
    repo: ShadowRepo, index: CheckpointIndex, *, run_id: str | None = None, to: str | None = None
) -> PreparedUndo:
    """Plan an undo of `run_id` (default: the last run here) or back to checkpoint `to`."""
    worktree = str(repo.worktree)
    notes: list[str] = []
    outside: set[str] = set()
    if to is not None:
        point = find_checkpoint(index, worktree, to)
        target, target_id, undoing, undid = point["tree"], point["id"], f"checkpoint {point['id']}", point["id"]
        expected = latest_state(index, worktree)
        outside = changed_outside_runs(repo, index, worktree, point["id"])
    else:
        run = find_run(index, worktree, run_id)
        target, target_id = run.first["tree"], run.first["id"]
        undoing, undid = f"{'undo' if run.source == 'undo' else 'run'} {run.run_id}", run.run_id
        expected, note = left_state(index, run)
        if note:
            notes.append(note)
    with repo.lock():
        current = repo.snapshot()
    expected = expected or current.tree
    with gone_from_store(undid):
        skipped = (
            relevant_skipped(skipped_of(point, repo.commit_message), current.skipped)
            if to is not None
            else run_skipped(repo, run)
        )
        points = index.checkpoints(worktree) if to is not None else run.checkpoints
        aside = _still_left(
            repo, skipped, skipped_of(points[-1], repo.commit_message) if points else {}, current.skipped
        )
        plan = plan_undo(
            repo.diff(target, expected),
            repo.diff(expected, current.tree),
            whole_tree=to is not None,
            skipped=skipped,
            outside=outside,
            aside=aside,
        )
    return PreparedUndo(repo, index, undoing, undid, target_id, target, current, plan, notes)


def _still_left(
    repo: ShadowRepo, skipped: Sequence[str], left: Mapping[str, Sequence], now: Mapping[str, Sequence]
) -> dict[str, bool]:
    """Of the files left out of checkpoints that stand there now: whether each is as the last
    checkpoint recorded it (size and mtime). Git does not list a FIFO it does not track: `lstat`."""
    out = {}
    for rel in skipped:
        record = now.get(rel)
        if record is None:
            path = _reachable(repo, rel)
            try:
                info = os.lstat(path) if path is not None else None
            except OSError:
                info = None
            if info is None or stat.S_ISDIR(info.st_mode):
                continue
            record = [info.st_size, info.st_mtime_ns]
        out[rel] = list(record[:2]) == list(left.get(rel, [None, None])[:2])
    return out


def apply_undo(prepared: PreparedUndo, *, force: bool, clock: Clock, journal: Journal | None = None) -> UndoResult:
    """Apply the plan (its conflicts too with `force`), as a checkpointed run of its own."""
    repo, plan = prepared.repo, prepared.plan
    chosen = plan.chosen(force)
    recorder = Recorder(repo, prepared.index, clock, run_id=new_id(clock.now(), "undo-"), pin_rules=False)
    before = recorder.checkpoint("before", expect_tree=prepared.current.tree)
    if before is None:
        raise TreeChanged("the working tree changed while undo was asking; nothing was changed — run it again")
    moved: dict[str, str] = {}
    try:
        with repo.lock():
            failed = write_back(
                repo,
                prepared.target,
                [a.path for a in chosen if a.op == "write"],
                [a.path for a in chosen if a.op == "delete"],
                aside=[a.path for a in chosen if a.aside],
                aside_to=repo.root / "aside" / recorder.run_id,
                moved=moved,
            )
    except CheckpointError:
        failed = []  # git wrote what it could; the check against the target below names the rest
    after = recorder.checkpoint("after", calls=[{"id": "undo", "name": "undo"}], before=before)
    # Byte for byte: every path the undo handled must now be as the target holds it.
    wrong = {d.path for d in repo.diff(prepared.target, after.tree)}
    failed = sorted(set(failed) | {a.path for a in chosen if a.path in wrong})
    forced = [a.path for a in plan.conflicts] if force else []
    result = UndoResult(
        recorder.run_id,
        before.id,
        after.id,
        [{"path": a.path, "kind": a.kind} for a in chosen if a.path not in failed],
        forced,
        failed,
        moved=moved,
    )
    recorder.finish("undo", undid=prepared.undid, target=prepared.target_id, forced=forced, failed=failed)
    if journal is not None:
        try:  # the files are restored either way; a journal that cannot be written is said, not raised
            journal.append(
                "undo",
                {
                    "run_id": recorder.run_id,
                    "undid": prepared.undid,
                    "target": prepared.target_id,
                    "before": before.id,
                    "after": after.id,
                    "files": len(result.done),
                    "forced": forced,
                    "failed": failed,
                    "worktree": str(repo.worktree),
                },
            )
        except OSError as error:
            result.warnings.append(f"audit journal not written: {type(error).__name__}: {error}")
    return result


def write_back(
    repo: ShadowRepo,
    tree: str,
    write: Sequence[str],
    delete: Sequence[str],
    *,
    aside: Sequence[str] = (),
    aside_to: Path | None = None,
    moved: dict[str, str] | None = None,
) -> list[str]:
    """Make `write` paths of `repo`'s working tree as `tree` holds them (bytes and mode) and remove
    `delete` paths (then the folders that removal left empty, as git itself does); `aside` paths are
    moved into `aside_to` first (and named in `moved`). Only through real folders, never into a `.git`
    or the state folder (module docstring). Returns the paths that could not be done."""
    failed = []
    for rel in delete:  # first: a created file may stand where a restored folder goes
        if not _remove(repo, rel):
            failed.append(rel)
    for rel in aside:
        where = _move_aside(repo, rel, aside_to or repo.root / "aside")
        if where is None:
            failed.append(rel)
        elif where and moved is not None:
            moved[rel] = where
    failed += [rel for rel in write if _protected(repo, rel)]
    write = [rel for rel in write if rel not in failed]
    if write:
        scratch = {"GIT_INDEX_FILE": str(repo.tree_dir / "restore.index")}
        try:
            repo.run_git("read-tree", tree, env=scratch)
            # git itself never writes through a link on the way: it removes the link and makes the folder
            repo.run_git(
                "checkout-index",
                "-f",
                "-z",
                "--stdin",
                env=scratch,
                writes_tree=True,
                stdin=b"\0".join(os.fsencode(p) for p in write) + b"\0",
            )
        finally:
            Path(scratch["GIT_INDEX_FILE"]).unlink(missing_ok=True)
    return failed


def _protected(repo: ShadowRepo, rel: str) -> bool:
    """In a `.git` folder or the state folder (or not a plain relative path): undo never touches it."""
    parts = rel.split("/")
    if ".git" in parts or "" in parts or ".." in parts:
        return True
    path = repo.worktree.joinpath(*parts)
    return path == repo.state_dir or path.is_relative_to(repo.state_dir)


def _reachable(repo: ShadowRepo, rel: str) -> Path | None:
    """`rel` in the working tree when undo may delete or move it: not protected, and every folder on
    the way a real folder (or not there); None otherwise."""
    if _protected(repo, rel):
        return None
    parts = rel.split("/")
    path = repo.worktree.joinpath(*parts)
    at = repo.worktree
    for part in parts[:-1]:
        at = at / part
        try:
            if not stat.S_ISDIR(os.lstat(at).st_mode):
                return None  # a link (or a file) where a folder was: never through it
        except FileNotFoundError:
            return path
        except OSError:
            return None
    return path


def _remove(repo: ShadowRepo, rel: str) -> bool:
    path = _reachable(repo, rel)
    if path is None:
        return False
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            return False
        path.unlink()  # a link is removed itself, never what it points at
    except FileNotFoundError:
        pass
    except OSError:
        return False
    folder = path.parent
    while folder != repo.worktree and folder.is_relative_to(repo.worktree):
        try:
            folder.rmdir()  # only succeeds when empty
        except OSError:
            break
        folder = folder.parent
    return True


def _move_aside(repo: ShadowRepo, rel: str, aside_to: Path) -> str | None:
    """Move what stands at `rel` (a file past the size cap, a FIFO: `lstat` only, never opened) to
    `aside_to/rel`; where it went, or None when it could not be moved."""
    path = _reachable(repo, rel)
    if path is None:
        return None
    target = aside_to.joinpath(*rel.split("/"))
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(path, target)
    except FileNotFoundError:
        return ""
    except OSError:
        return None
    return str(target)

"""`arreio undo`: take the working tree back to before a run (or to a checkpoint), byte for byte.

`prepare_undo` snapshots the tree as it is now and plans (`plan.plan_undo`: pure): what the run
changed and is still as the run left it is restored; what was changed again since is a conflict,
touched only with --force. `apply_undo` is checkpointed like a run of its own (`undo-…`), so an undo
can be undone; it re-checks that the tree did not change while the plan was shown, verifies every
restored path against the target afterwards, and journals the undo in the audit log.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arreio.engine.errors import ArreioError
from arreio.engine.governance.checkpoints.history import (
    changed_outside_runs,
    find_checkpoint,
    find_run,
    gone_from_store,
    latest_state,
    left_state,
    run_skipped,
)
from arreio.engine.governance.checkpoints.index import CheckpointIndex
from arreio.engine.governance.checkpoints.plan import UndoPlan, plan_undo, relevant_skipped
from arreio.engine.governance.checkpoints.recorder import Recorder
from arreio.engine.governance.checkpoints.store import CheckpointError, ShadowRepo, Snapshot
from arreio.engine.ids import new_id
from arreio.engine.ports import Clock


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


def prepare_undo(repo: ShadowRepo, index: CheckpointIndex, *, run_id: str | None = None,
                 to: str | None = None) -> PreparedUndo:
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
    skipped = relevant_skipped(point.get("skipped") or {}, current.skipped) if to is not None else run_skipped(run)
    with gone_from_store(undid):
        plan = plan_undo(repo.diff(target, expected), repo.diff(expected, current.tree), whole_tree=to is not None,
                         skipped=skipped, outside=outside)
    return PreparedUndo(repo, index, undoing, undid, target_id, target, current, plan, notes)


def apply_undo(prepared: PreparedUndo, *, force: bool, clock: Clock, journal: Journal | None = None) -> UndoResult:
    """Apply the plan (its conflicts too with `force`), as a checkpointed run of its own."""
    repo, plan = prepared.repo, prepared.plan
    chosen = plan.chosen(force)
    recorder = Recorder(repo, prepared.index, clock, run_id=new_id(clock.now(), "undo-"))
    before = recorder.checkpoint("before", expect_tree=prepared.current.tree)
    if before is None:
        raise TreeChanged("the working tree changed while undo was asking; nothing was changed — run it again")
    try:
        with repo.lock():
            failed = write_back(repo, prepared.target, [a.path for a in chosen if a.op == "write"],
                                [a.path for a in chosen if a.op == "delete"])
    except CheckpointError:
        failed = []  # git wrote what it could; the check against the target below names the rest
    after = recorder.checkpoint("after", calls=[{"id": "undo", "name": "undo"}], before=before)
    # Byte for byte: every path the undo handled must now be as the target holds it.
    wrong = {d.path for d in repo.diff(prepared.target, after.tree)}
    failed = sorted(set(failed) | {a.path for a in chosen if a.path in wrong})
    forced = [a.path for a in plan.conflicts] if force else []
    result = UndoResult(recorder.run_id, before.id, after.id,
                        [{"path": a.path, "kind": a.kind} for a in chosen if a.path not in failed], forced, failed)
    recorder.finish("undo", undid=prepared.undid, target=prepared.target_id, forced=forced, failed=failed)
    if journal is not None:
        try:  # the files are restored either way; a journal that cannot be written is said, not raised
            journal.append("undo", {
                "run_id": recorder.run_id, "undid": prepared.undid, "target": prepared.target_id,
                "before": before.id, "after": after.id, "files": len(result.done), "forced": forced,
                "failed": failed, "worktree": str(repo.worktree),
            })
        except OSError as error:
            result.warnings.append(f"audit journal not written: {type(error).__name__}: {error}")
    return result


def write_back(repo: ShadowRepo, tree: str, write: Sequence[str], delete: Sequence[str]) -> list[str]:
    """Make `write` paths of `repo`'s working tree as `tree` holds them (bytes and mode) and remove
    `delete` paths (then the folders that removal left empty, as git itself does). Returns the paths that could not be done."""
    failed = []
    for rel in delete:  # first: a created file may stand where a restored folder goes
        if not _remove(repo.worktree, rel):
            failed.append(rel)
    if write:
        scratch = {"GIT_INDEX_FILE": str(repo.tree_dir / "restore.index")}
        try:
            repo.run_git("read-tree", tree, env=scratch)
            repo.run_git("checkout-index", "-f", "-z", "--stdin", env=scratch, writes_tree=True,
                         stdin=b"\0".join(os.fsencode(p) for p in write) + b"\0")
        finally:
            Path(scratch["GIT_INDEX_FILE"]).unlink(missing_ok=True)
    return failed


def _remove(worktree: Path, rel: str) -> bool:
    path = worktree / rel
    parent = Path(os.path.realpath(path.parent))
    if parent != worktree and not parent.is_relative_to(worktree):
        return False  # a folder on the way is a symlink out of the tree: never delete through it
    try:
        if path.is_dir() and not path.is_symlink():
            return False
        path.unlink(missing_ok=True)
    except OSError:
        return False
    folder = path.parent
    while folder != worktree and folder.is_relative_to(worktree):
        try:
            folder.rmdir()  # only succeeds when empty
        except OSError:
            break
        folder = folder.parent
    return True

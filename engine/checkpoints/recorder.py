"""Taking a checkpoint and recording it: snapshot → commit on the run's own ref → index line, all under
the store's lock and all on disk before the call the checkpoint protects runs (a SIGKILL mid-round
leaves a checkpoint `undo` can use). Used by the run's hook and by `arreio undo` (an undo is a run of
its own, so it can be undone too)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arreio.engine.checkpoints.index import CheckpointIndex, skipped_line
from arreio.engine.checkpoints.plan import relevant_skipped, summarise
from arreio.engine.checkpoints.store import ShadowRepo
from arreio.engine.core.ids import iso_ms
from arreio.engine.core.ports import Clock

RUN_REF = "refs/arreio/runs/"


@dataclass
class Checkpoint:
    """A recorded state of the working tree: `id` is what `undo --to` takes."""

    id: str
    commit: str
    tree: str
    skipped: dict[str, list] = field(default_factory=dict)


def checkpoint_id(commit: str) -> str:
    return "ck-" + commit[:12]


@dataclass
class Recorder:
    """Checkpoints of one run (or one undo) in one working tree. Commits chain on the run's ref
    (`refs/arreio/runs/<run-id>`), so the run's states stay reachable until the run is pruned."""

    repo: ShadowRepo
    index: CheckpointIndex
    clock: Clock
    run_id: str
    session_id: str = ""
    first: Checkpoint | None = None
    last: Checkpoint | None = None
    # A run's snapshots keep to the ignore rules of its first checkpoint once it changes a .gitignore
    # (store.py). An undo's do not: it restores the rules of the state it goes back to, and keeps to those.
    pin_rules: bool = True

    def checkpoint(
        self,
        phase: str,
        *,
        step: int = 0,
        calls: Sequence[dict[str, str]] = (),
        before: Checkpoint | None = None,
        expect_tree: str | None = None,
        watch: Sequence[str] = (),
    ) -> Checkpoint | None:
        """Snapshot the tree now. Unchanged since this run's last checkpoint: that one still stands
        (nothing is written). Otherwise a new checkpoint is committed, referenced and indexed; an
        `after` one records the round it closes (`before`, `calls`, and what changed). With
        `expect_tree`, a tree that is not that one records nothing and returns None (an undo's plan
        was made for that tree). `watch`: the files the run's file tools write (`ShadowRepo.snapshot`)."""
        with self.repo.lock():
            rules = self.first.tree if self.first is not None and self.pin_rules else None
            snap = self.repo.snapshot(keep=False, watch=watch, rules_from=rules)
            if expect_tree is not None and snap.tree != expect_tree:
                self.repo.keep(snap.tree)
                return None
            if self.last is not None and snap.tree == self.last.tree and snap.skipped == self.last.skipped:
                self.repo.keep(snap.tree)
                return self.last
            # What the snapshot left out, by real name, goes with the commit (git keeps the real names
            # in the object store; the index line shows them redacted): a file the run made under a
            # .gitignore'd path changes no tree, only this, so it makes a checkpoint of its own.
            parent = self.last.commit if self.last is not None else None
            message = f"{self.run_id} step {step} {phase}\n\n{skipped_line(snap.skipped)}".rstrip()
            commit = self.repo.commit(snap.tree, parent, message)
            self.repo.set_refs({RUN_REF + self.run_id: commit, self.repo.tree_ref: snap.tree})
            point = Checkpoint(checkpoint_id(commit), commit, snap.tree, snap.skipped)
            line: dict[str, Any] = {
                "type": "checkpoint",
                "id": point.id,
                "commit": commit,
                "tree": snap.tree,
                "worktree": str(self.repo.worktree),
                "run_id": self.run_id,
                "session_id": self.session_id,
                "step": step,
                "phase": phase,
                "at": iso_ms(self.clock.now()),
                "skipped": snap.skipped,
            }
            if phase == "after" and before is not None:
                line.update(
                    before=before.id, calls=list(calls), changes=summarise(self.repo.diff(before.tree, snap.tree))
                )
            self.index.append(line)
        self.first = self.first or point
        self.last = point
        return point

    def finish(self, source: str = "run", **extra: Any) -> dict[str, Any] | None:
        """The run's `end` line: its net changes from its first checkpoint to its last, and the files
        left out of checkpoints that it touched. None when it took no checkpoint."""
        if self.first is None or self.last is None:
            return None
        changes = summarise(self.repo.diff(self.first.tree, self.last.tree))
        line = {
            "type": "end",
            "run_id": self.run_id,
            "worktree": str(self.repo.worktree),
            "session_id": self.session_id,
            "source": source,
            "before": self.first.id,
            "after": self.last.id,
            "changes": changes,
            "skipped": relevant_skipped(self.first.skipped, self.last.skipped),
            "at": iso_ms(self.clock.now()),
            **extra,
        }
        with self.repo.lock():
            return self.index.append(line)

"""Reading the checkpoints back: which run is meant, which state it left, what it changed, and pruning.

`arreio diff`, `arreio undo` and `arreio checkpoints` call these; they raise `UsageError` (exit 2) for
an id that names nothing, so the CLI stays a thin layer of parsing and printing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

from arreio.engine.checkpoints.index import CheckpointIndex, Redacting, RunRecord, skipped_of
from arreio.engine.checkpoints.plan import RunAge, prune_by_age, prune_order, relevant_skipped, summarise
from arreio.engine.checkpoints.recorder import RUN_REF
from arreio.engine.checkpoints.store import CheckpointError, ShadowRepo, find_git
from arreio.engine.core.errors import UsageError
from arreio.engine.core.ids import parse_utc

NOT_FINISHED = (
    "run {run} did not finish (killed?): it has no checkpoint after its last round, so every change "
    "since then is taken as the run's"
)


def open_store(
    state_dir: Path,
    cwd: Path,
    env: Mapping[str, str],
    max_file_bytes: int = 10 << 20,
    untrusted: Sequence[Path] = (),
    redactor: Redacting | None = None,
) -> tuple[ShadowRepo, CheckpointIndex]:
    """The store and index of `cwd`; without git a `UsageError` saying so. git is found outside the
    working directory and `untrusted` (the sandbox's writable roots). `redactor`: what the names an
    index line shows pass through (an undo writes lines too)."""
    untrusted = [Path(cwd).resolve(), *untrusted]
    git = find_git(env, untrusted)
    if git is None:
        raise UsageError("git is not installed (or not on PATH): checkpoints need it — install git")
    return (
        ShadowRepo(
            state_dir, cwd, git=git, max_file_bytes=max_file_bytes, path_env=env.get("PATH"), untrusted=untrusted
        ),
        CheckpointIndex(state_dir, redactor=redactor),
    )


@contextmanager
def gone_from_store(run_id: str) -> Iterator[None]:
    """A run the index lists whose checkpoints the store no longer holds (its folder deleted or
    pruned by hand) is bad input, said plainly — not git's 'bad object' and exit 1."""
    try:
        yield
    except CheckpointError as error:
        signs = ("bad object", "not a valid object", "not a git repository", "bad file")  # the last: cat-file
        if not any(sign in error.message for sign in signs):
            raise
        raise UsageError(
            f"the checkpoints of {run_id} are no longer in the store (.arreio/checkpoints/ was "
            "deleted or pruned by hand): they cannot be shown or restored; runs from now on are "
            "checkpointed afresh"
        ) from None


def find_run(index: CheckpointIndex, worktree: str, run_id: str | None, *, source: str | None = "run") -> RunRecord:
    """A run (or undo) of this working tree by id or unique prefix; None: the last run here."""
    runs = index.runs(worktree)
    if run_id is None:
        mine = [r for r in runs if source is None or r.source == source]
        if not mine:
            raise UsageError("no checkpointed run in this folder yet (see `arreio checkpoints list`)")
        return mine[-1]
    exact = [r for r in runs if r.run_id == run_id]
    matches = exact or [r for r in runs if r.run_id.startswith(run_id)]
    if not matches:
        hint = " (it changed no files, or its checkpoints were pruned)" if run_id.startswith("run-") else ""
        raise UsageError(f"no checkpoints for run {run_id} in this folder{hint}; see `arreio checkpoints list`")
    if len(matches) > 1:
        raise UsageError(f"run id {run_id} is ambiguous: {', '.join(r.run_id for r in matches[:5])}")
    return matches[0]


def find_checkpoint(index: CheckpointIndex, worktree: str, ident: str) -> dict[str, Any]:
    """A checkpoint of this working tree by id (`ck-…`) or unique prefix; a run id means the
    checkpoint before that run."""
    points = index.checkpoints(worktree)
    matches = list({p["id"]: p for p in points if p["id"] == ident or p["id"].startswith(ident)}.values())
    if not matches:
        runs = [r for r in index.runs(worktree) if r.run_id == ident]
        if runs:
            return runs[0].first
        raise UsageError(f"no checkpoint {ident} in this folder; see `arreio checkpoints list`")
    if len(matches) > 1:
        raise UsageError(f"checkpoint id {ident} is ambiguous: {', '.join(p['id'] for p in matches[:5])}")
    return matches[0]


def left_state(index: CheckpointIndex, run: RunRecord) -> tuple[str | None, str | None]:
    """The tree `run` left (None: the current tree) and a note when that had to be guessed. A run
    that finished left its last checkpoint. One that was killed left no `after`: the next state
    anybody recorded here stands for it, or the tree as it is now."""
    if run.closed:
        return run.last["tree"], None
    points = index.checkpoints(run.worktree)
    mark = max((i for i, p in enumerate(points) if p.get("run_id") == run.run_id), default=len(points))
    later = next((p for p in points[mark + 1 :] if p.get("run_id") != run.run_id), None)
    return (later["tree"] if later else None), NOT_FINISHED.format(run=run.run_id)


def changed_outside_runs(repo: ShadowRepo, index: CheckpointIndex, worktree: str, since: str) -> set[str]:
    """Paths changed after checkpoint `since` by something other than a run's tool rounds: wherever
    a checkpoint that opens a round or a run records another tree than the one before it (edited by
    hand between two runs, or while one ran)."""
    points = index.checkpoints(worktree)
    start = next((i for i, p in enumerate(points) if p["id"] == since), len(points))
    changed: set[str] = set()
    for before, point in pairwise(points[start:]):
        if point.get("phase") != "after" and point["tree"] != before["tree"]:
            changed.update(d.path for d in repo.diff(before["tree"], point["tree"]))
    return changed


def latest_state(index: CheckpointIndex, worktree: str) -> str | None:
    """The newest recorded state of the tree (None: unknown, take the tree as it is now — the newest
    run did not finish)."""
    runs = index.runs(worktree)
    points = index.checkpoints(worktree)
    if not points:
        return None
    owner = next((r for r in runs if r.run_id == points[-1]["run_id"]), None)
    return points[-1]["tree"] if owner is not None and owner.closed else None


def run_skipped(repo: ShadowRepo, run: RunRecord) -> list[str]:
    """The files left out of checkpoints that the run touched, by real name (the index shows them
    redacted: `index.skipped_of`)."""
    return list(skipped_reasons(repo, run))


def skipped_reasons(repo: ShadowRepo, run: RunRecord) -> dict[str, str]:
    """`run_skipped` with why each was left out ("ignored by .gitignore", "12.0 MB, over max_file_mb",
    …); "" where the index does not say (its first format kept the paths alone)."""
    if run.end is not None and run.end.get("v") == 1:
        return dict.fromkeys(run.end.get("skipped") or [], "")
    first, last = skipped_of(run.first, repo.commit_message), skipped_of(run.last, repo.commit_message)
    return {path: _reason(last.get(path) or first.get(path)) for path in relevant_skipped(first, last)}


def _reason(entry: Any) -> str:
    """The `why` of a skipped entry ([size, mtime_ns, why])."""
    return str(entry[2]) if isinstance(entry, (list, tuple)) and len(entry) > 2 and entry[2] else ""


# -- diff ---------------------------------------------------------------------------------------------
@dataclass
class RunDiff:
    run_id: str
    before: str  # checkpoint id or "" (the tree now)
    after: str
    changes: dict[str, list[str]]
    stat: dict[str, tuple[int | None, int | None]]
    patch: str
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    skipped_why: dict[str, str] = field(default_factory=dict)  # each skipped path: why ("" when unknown)


def diff_run(
    repo: ShadowRepo, index: CheckpointIndex, run_id: str | None, step: int | None = None, *, stat_only: bool = False
) -> RunDiff:
    """What a run changed (or one step of it): the created, modified and deleted paths and the patch."""
    run = find_run(index, str(repo.worktree), run_id, source=None if run_id else "run")
    notes: list[str] = []
    if step is not None:
        rounds = [r for r in run.rounds() if r.get("step") == step]
        if not rounds:
            steps = sorted({r.get("step") for r in run.rounds()})
            raise UsageError(
                f"run {run.run_id} changed no files at step {step}"
                + (f" (steps with changes: {', '.join(map(str, steps))})" if steps else "")
            )
        by_id = {p["id"]: p for p in run.checkpoints}
        before, after = by_id[rounds[0]["before"]], rounds[-1]
        a_tree, b_tree, b_id = before["tree"], after["tree"], after["id"]
    else:
        before = run.first
        a_tree = before["tree"]
        b_tree, note = left_state(index, run)
        if note:
            notes.append(note)
        b_id = run.last["id"] if run.closed else ""
        if b_tree is None:
            with repo.lock():
                b_tree = repo.snapshot().tree
    with gone_from_store(run.run_id):
        deltas = repo.diff(a_tree, b_tree)
        reasons = skipped_reasons(repo, run)
    return RunDiff(
        run.run_id,
        before["id"],
        b_id,
        summarise(deltas),
        repo.numstat(a_tree, b_tree) if deltas else {},
        repo.patch(a_tree, b_tree, stat_only=stat_only) if deltas else "",
        notes,
        list(reasons),
        reasons,
    )


# -- pruning ------------------------------------------------------------------------------------------
@dataclass
class PruneResult:
    removed: list[str] = field(default_factory=list)
    size_before: int = 0
    size_after: int = 0


def run_ages(runs: Sequence[RunRecord]) -> list[RunAge]:
    out = []
    for r in runs:
        try:
            out.append(RunAge(r.run_id, r.worktree, parse_utc(r.at)))
        except UsageError:
            continue  # an unreadable time: never pruned by age
    return out


def prune(
    repo: ShadowRepo,
    index: CheckpointIndex,
    *,
    now: datetime,
    keep: timedelta,
    max_bytes: int | None,
    protect: Sequence[str] = (),
    only_age: bool = False,
) -> PruneResult:
    """Remove whole runs' checkpoints: those older than `keep`, then the oldest while the store is
    over `max_bytes`. Each working tree's newest run and `protect`ed runs are always kept. The whole
    store (every working tree sharing the state folder) is considered."""
    result = PruneResult()
    with repo.lock():
        repo.ensure()
        runs = index.runs()
        ages = run_ages(runs)
        if not ages:
            return result
        drop = prune_by_age(ages, now, keep, protect)
        if drop:
            _drop(repo, index, drop)
            result.removed += drop
        if max_bytes is None or only_age:
            return result
        result.size_before = result.size_after = size = repo.size_bytes()
        batch, order = 1, [r for r in prune_order(ages, protect) if r not in drop]
        while size > max_bytes and order:  # object sizes are shared between runs: measure, don't guess
            chosen, order = order[:batch], order[batch:]
            _drop(repo, index, chosen)
            result.removed += chosen
            size = result.size_after = repo.size_bytes()
            batch *= 2
    return result


def _drop(repo: ShadowRepo, index: CheckpointIndex, run_ids: Sequence[str]) -> None:
    gone = set(run_ids)
    index.rewrite(lambda r: r.get("run_id") not in gone)
    repo.delete_refs([RUN_REF + r for r in run_ids])
    repo.prune_objects()

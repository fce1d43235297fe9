"""Pure decisions of checkpoints (docs/architecture.md section 8: pure decisions, impure edges): which tool calls
may change the working tree, what a set of deltas amounts to, the undo plan and its conflicts, and
which runs a prune removes. No I/O here; the store and the index feed these and act on the answers."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from arreio.engine.checkpoints.store import Delta, Entry

# Tools that cannot change the working tree: a round of only these takes no checkpoint at all.
# (`memory` writes the state folder, which is never snapshotted.) Anything else — the write and edit
# tools, `shell`, `delegate`, skills' and MCP tools — may, unless the tool itself says `read_only` and
# is arreio's own (the caller decides: an MCP server's readOnlyHint is only its word, feature.py).
READ_ONLY_TOOLS = frozenset(
    {
        "read_file",
        "list_dir",
        "grep",
        "kb_search",
        "result_query",
        "result_grep",
        "web_fetch",
        "web_search",
        "memory",
        "skill_view",
    }
)


def may_change(name: str, *, read_only: bool = False) -> bool:
    """Whether a call of tool `name` may change files (`read_only`: a tool arreio holds declares it
    cannot; never a remote server's claim)."""
    return not (read_only or name in READ_ONLY_TOOLS)


def summarise(deltas: Sequence[Delta]) -> dict[str, list[str]]:
    """`{"created": [...], "modified": [...], "deleted": [...]}`, each sorted (the report's `changes`)."""
    out: dict[str, list[str]] = {"created": [], "modified": [], "deleted": []}
    for d in deltas:
        out["created" if d.before is None else "deleted" if d.after is None else "modified"].append(d.path)
    return {k: sorted(v) for k, v in out.items()}


def empty_changes() -> dict[str, list[str]]:
    return {"created": [], "modified": [], "deleted": []}


def shown(path: str) -> str:
    """A path as people and JSON can take it: a name that is not UTF-8 shows its bytes as `\\xe9`,
    one with a newline or another control character is quoted with escapes (as git quotes it)."""
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return json.dumps(text, ensure_ascii=False) if not text.isprintable() else text


def shown_changes(changes: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    return {kind: [shown(p) for p in paths] for kind, paths in changes.items()}


# -- the undo plan ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Action:
    """One path of the plan: `write` it as the target holds it, or `delete` it (the target lacks it).
    `kind` says what the undo does for a person: restore (modified), bring back (deleted), remove
    (created). A conflict carries `why` (the path is not as the run left it)."""

    path: str
    op: str  # "write" | "delete"
    kind: str  # "restore" | "bring back" | "remove"
    why: str = ""
    # what stands there now was never checkpointed (too big, a FIFO): it is moved aside, not overwritten
    aside: bool = False


@dataclass
class UndoPlan:
    actions: list[Action] = field(default_factory=list)  # done without asking further
    conflicts: list[Action] = field(default_factory=list)  # done only with --force
    already: list[str] = field(default_factory=list)  # already as the target has them
    skipped: list[str] = field(default_factory=list)  # never captured (too big, ...): left alone

    def chosen(self, force: bool) -> list[Action]:
        return self.actions + (self.conflicts if force else [])

    @property
    def empty(self) -> bool:
        return not self.actions and not self.conflicts


def _action(path: str, target: Entry | None, current: Entry | None, why: str = "") -> Action:
    if target is None:
        return Action(path, "delete", "remove", why)
    return Action(path, "write", "bring back" if current is None else "restore", why)


def _why(expected: Entry | None, current: Entry | None) -> str:
    if current is None:
        return "deleted since"
    if expected is None:
        return "created since"
    return "mode changed since" if current.blob == expected.blob else "changed since"


def plan_undo(
    target_to_expected: Sequence[Delta],
    expected_to_current: Sequence[Delta],
    *,
    whole_tree: bool,
    skipped: Sequence[str] = (),
    outside: Collection[str] = (),
    aside: Mapping[str, bool] | None = None,
) -> UndoPlan:
    """Take the tree back to `target` (the checkpoint before a run). `expected` is the state the run
    left (its last checkpoint); `current` the tree now. A path the run changed that is still as the
    run left it is restored; one changed again since (by hand, or by a later run) is a conflict: it is
    overwritten only with --force. With `whole_tree` (`--to`) every path that differs from the target
    counts, so a change made after the last checkpoint is a conflict too. `skipped` paths (never
    captured) are listed and left alone — unless the target holds the file and `aside` names it: what
    stands there now (a file grown past the size cap, a FIFO) was made after the target, and the
    target's bytes go back, what stands there moved aside first (`aside[path]`: still as the run left
    it; if not, a conflict). `outside` paths changed between `target` and `expected`
    outside any run (by hand, between two runs): a conflict too, never taken back unasked."""
    leave, aside = set(skipped), aside or {}
    since = {d.path: d for d in expected_to_current}
    plan = UndoPlan()
    seen, restored = set(), set()
    for d in target_to_expected:
        seen.add(d.path)
        if d.path in leave:
            if d.path in aside and d.before is not None:
                restored.add(d.path)
                unchanged = aside[d.path]
                (plan.actions if unchanged else plan.conflicts).append(
                    Action(d.path, "write", "restore", "" if unchanged else "changed since", aside=True)
                )
            continue
        later = since.get(d.path)
        current = later.after if later is not None else d.after
        if current == d.before:
            plan.already.append(d.path)
        elif later is None and d.path not in outside:
            plan.actions.append(_action(d.path, d.before, current))
        elif later is None:
            plan.conflicts.append(_action(d.path, d.before, current, _why(d.before, d.after) + ", not by a run"))
        else:
            plan.conflicts.append(_action(d.path, d.before, current, _why(d.after, current)))
    if whole_tree:
        for path, later in since.items():
            if path not in seen and path not in leave:  # target == expected there; current differs
                plan.conflicts.append(_action(path, later.before, later.after, _why(later.before, later.after)))
    plan.skipped = sorted(leave - restored)
    plan.actions.sort(key=lambda a: a.path)
    plan.conflicts.sort(key=lambda a: a.path)
    plan.already.sort()
    return plan


def relevant_skipped(first: Mapping[str, Sequence], last: Mapping[str, Sequence]) -> list[str]:
    """Files left out of checkpoints that a run touched: new, gone, or changed (size or mtime) between
    its first checkpoint and its last. A big file the run never touched does not matter to its undo."""
    out = []
    for path in set(first) | set(last):
        a, b = first.get(path), last.get(path)
        if a is None or b is None or list(a[:2]) != list(b[:2]):
            out.append(path)
    return sorted(out)


# -- pruning ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunAge:
    """What a prune needs to know of a run: its id, its working tree, when it started."""

    run_id: str
    worktree: str
    at: datetime


def prune_by_age(runs: Sequence[RunAge], now: datetime, keep: timedelta, protect: Sequence[str] = ()) -> list[str]:
    """Runs older than `keep`, except each working tree's newest run (the one `arreio undo` undoes by
    default) and `protect`ed ones (the run in progress)."""
    newest = {r.worktree: r.run_id for r in sorted(runs, key=lambda r: r.at)}
    return [
        r.run_id for r in runs if now - r.at > keep and r.run_id not in protect and newest.get(r.worktree) != r.run_id
    ]


def prune_order(runs: Sequence[RunAge], protect: Sequence[str] = ()) -> list[str]:
    """The order a size cap removes runs in: oldest first, never a tree's newest or a protected one."""
    newest = {r.worktree: r.run_id for r in sorted(runs, key=lambda r: r.at)}
    return [
        r.run_id
        for r in sorted(runs, key=lambda r: r.at)
        if r.run_id not in protect and newest.get(r.worktree) != r.run_id
    ]

"""The pure decisions: which calls may change files, the undo plan and its conflicts, what a prune removes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from arreio.engine.checkpoints.plan import (
    READ_ONLY_TOOLS,
    RunAge,
    may_change,
    plan_undo,
    prune_by_age,
    prune_order,
    relevant_skipped,
    summarise,
)
from arreio.engine.checkpoints.store import Delta, Entry

A, B, C = Entry("100644", "a" * 40), Entry("100644", "b" * 40), Entry("100644", "c" * 40)
A_EXEC = Entry("100755", "a" * 40)


def test_read_only_tools_take_no_checkpoint_and_everything_else_does() -> None:
    for name in (
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
    ):
        assert not may_change(name) and name in READ_ONLY_TOOLS
    for name in ("write_file", "edit_file", "shell", "delegate", "github__create_issue", "skill_manage"):
        assert may_change(name)
    assert not may_change("kb_stats", read_only=True)  # a tool of arreio's own that declares read_only


def test_summary_sorts_created_modified_deleted() -> None:
    deltas = [Delta("z", None, A), Delta("m", A, B), Delta("d", A, None), Delta("a", None, B)]
    assert summarise(deltas) == {"created": ["a", "z"], "modified": ["m"], "deleted": ["d"]}


def test_the_plan_restores_what_is_as_the_run_left_it_and_flags_what_changed_since() -> None:
    run = [
        Delta("mod", A, B),
        Delta("gone", A, None),
        Delta("new", None, B),
        Delta("edited", A, B),
        Delta("hand-deleted", A, B),
        Delta("reverted", A, B),
    ]
    since = [
        Delta("edited", B, C),
        Delta("hand-deleted", B, None),
        Delta("reverted", B, A),
        Delta("elsewhere", A, C),
    ]  # a hand edit of a path the run never touched
    plan = plan_undo(run, since, whole_tree=False)
    assert [(a.path, a.op, a.kind) for a in plan.actions] == [
        ("gone", "write", "bring back"),
        ("mod", "write", "restore"),
        ("new", "delete", "remove"),
    ]
    assert [(a.path, a.op, a.why) for a in plan.conflicts] == [
        ("edited", "write", "changed since"),
        ("hand-deleted", "write", "deleted since"),
    ]
    assert plan.already == ["reverted"] and "elsewhere" not in {a.path for a in plan.chosen(True)}
    assert [a.path for a in plan.chosen(force=False)] == ["gone", "mod", "new"]
    assert len(plan.chosen(force=True)) == 5 and not plan.empty


def test_to_a_checkpoint_every_later_hand_change_is_a_conflict() -> None:
    since = [Delta("elsewhere", A, C), Delta("created-by-hand", None, B), Delta("mode", A, A_EXEC)]
    plan = plan_undo([Delta("mod", A, B)], since, whole_tree=True)
    assert [a.path for a in plan.actions] == ["mod"]
    assert [(a.path, a.op, a.why) for a in plan.conflicts] == [
        ("created-by-hand", "delete", "created since"),
        ("elsewhere", "write", "changed since"),
        ("mode", "write", "mode changed since"),
    ]


def test_files_never_captured_are_listed_and_left_alone() -> None:
    plan = plan_undo([Delta("big", A, None), Delta("mod", A, B)], [], whole_tree=False, skipped=["big"])
    assert [a.path for a in plan.actions] == ["mod"] and plan.skipped == ["big"]
    first = {"same": [10, 1, "big"], "gone": [10, 1, "big"], "grown": [10, 1, "big"]}
    last = {"same": [10, 1, "big"], "grown": [20, 2, "big"], "new": [30, 3, "big"]}
    assert relevant_skipped(first, last) == ["gone", "grown", "new"]


def test_an_empty_plan() -> None:
    plan = plan_undo([Delta("x", A, B)], [Delta("x", B, A)], whole_tree=False)
    assert plan.empty and plan.already == ["x"]


def test_pruning_keeps_each_trees_newest_run_and_the_protected_one() -> None:
    now = datetime(2026, 6, 27, tzinfo=UTC)
    old = now - timedelta(days=40)
    runs = [
        RunAge("r1", "/a", old),
        RunAge("r2", "/a", old + timedelta(hours=1)),
        RunAge("r3", "/b", old),
        RunAge("r4", "/a", now - timedelta(days=1)),
        RunAge("r5", "/c", old),
    ]
    assert prune_by_age(runs, now, timedelta(days=30)) == ["r1", "r2"]  # r3, r5: newest of their trees
    assert prune_by_age(runs, now, timedelta(days=30), protect=["r1"]) == ["r2"]
    assert prune_order(runs) == ["r1", "r2"]
    assert prune_order(runs, protect=["r2"]) == ["r1"]


def test_to_a_checkpoint_a_hand_change_between_runs_is_a_conflict() -> None:
    """Regression: `undo --to` restored a file edited by hand between two runs and removed a file
    made by hand, without a word; both are conflicts now, taken back only with --force."""
    between = [
        Delta("by-run", A, B),
        Delta("by-hand", A, C),
        Delta("made-by-hand", None, B),
        Delta("removed-by-hand", A, None),
    ]
    plan = plan_undo(between, [], whole_tree=True, outside={"by-hand", "made-by-hand", "removed-by-hand"})
    assert [a.path for a in plan.actions] == ["by-run"]
    assert [(a.path, a.op, a.why) for a in plan.conflicts] == [
        ("by-hand", "write", "changed since, not by a run"),
        ("made-by-hand", "delete", "created since, not by a run"),
        ("removed-by-hand", "write", "deleted since, not by a run"),
    ]
    assert {a.path for a in plan.chosen(force=True)} == {"by-run", "by-hand", "made-by-hand", "removed-by-hand"}

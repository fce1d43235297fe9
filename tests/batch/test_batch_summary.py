"""The summary is folded from rows: pass rates, pass@k, durations, spend, and the exit code rule."""

from __future__ import annotations

import pytest

from arreio.engine.batch.scheduler import Budget
from arreio.engine.batch.summary import Totals, pass_at_k, percentile, summarize


def row(task: str, attempt: int, passed: bool, **extra) -> dict:
    return {
        "task": task,
        "attempt": attempt,
        "passed": passed,
        "verdict": "success" if passed else "failed",
        "message": "" if passed else "gate failed",
        "duration_s": 1.0,
        "input_tokens": 100,
        "output_tokens": 10,
        "cached_tokens": 0,
        "cost_usd": 0.01,
        **extra,
    }


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(3, 0, 1) == 0.0
    assert pass_at_k(3, 3, 1) == 1.0
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at_k(3, 1, 3) == 1.0
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)  # 1 - C(2,2)/C(4,2)


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 0.9) == 0.0
    assert percentile([float(i) for i in range(1, 11)], 0.9) == 9.0
    assert percentile([5.0], 0.9) == 5.0


def test_summary_per_task_and_overall() -> None:
    rows = [
        row("a", 1, True),
        row("a", 2, False),
        row("b", 1, True, duration_s=3.0, cost_usd=None),
        row("b", 2, True, tries=2, cached_tokens=300),
    ]
    s = summarize(rows, batch_id="x", suite="s.yaml", tasks=["a", "b"], repeat=2, planned=4)
    assert (s["attempts"], s["passed"], s["failed"], s["pass_rate"]) == (4, 3, 1, 0.75)
    assert s["tasks"]["a"]["pass_at"] == {"1": 0.5, "2": 1.0}
    assert s["pass_at"] == {"1": 0.75, "2": 1.0}
    assert s["tasks"]["a"]["failures"] == ["#2 failed: gate failed"]
    assert s["cost_usd"] is None and s["cost_known_usd"] == pytest.approx(0.03)  # one price unknown
    assert s["tokens"] == {"input": 400, "output": 40, "cached": 300}
    assert s["cache_share"] == round(300 / 700, 4)
    assert s["duration_s"] == {"mean": 1.5, "p90": 3.0}
    assert s["retried"] == 1
    assert s["exit_code"] == 1  # one attempt failed


@pytest.mark.parametrize(
    ("rows", "planned", "min_rate", "stopped", "code"),
    [
        ([row("a", 1, True)], 1, None, None, 0),
        ([row("a", 1, True), row("b", 1, False)], 2, None, None, 1),
        ([row("a", 1, True), row("b", 1, False)], 2, 0.5, None, 0),
        ([row("a", 1, True), row("b", 1, False)], 2, 0.6, None, 1),
        ([row("a", 1, True)], 2, None, None, 1),  # not every attempt ran
        ([row("a", 1, True)], 2, None, "budget reached", 4),
    ],
)
def test_exit_code(rows, planned, min_rate, stopped, code) -> None:
    s = summarize(
        rows,
        batch_id="x",
        suite="s",
        tasks=["a", "b"],
        repeat=1,
        planned=planned,
        min_pass_rate=min_rate,
        stopped=stopped,
    )
    assert s["exit_code"] == code


def test_rows_of_tasks_not_selected_are_left_out() -> None:
    s = summarize([row("a", 1, True), row("gone", 1, False)], batch_id="x", suite="s", tasks=["a"], repeat=1, planned=1)
    assert (s["attempts"], s["exit_code"], list(s["tasks"])) == (1, 0, ["a"])


def test_budget() -> None:
    totals = Totals()
    totals.add(row("a", 1, True, cost_usd=0.5, input_tokens=900, output_tokens=100))
    assert Budget(max_cost_usd=1.0).reached(totals) is None
    assert "of --max-cost $0.5" in Budget(max_cost_usd=0.5).reached(totals)
    assert "1,000 tokens of --max-tokens 1,000" in Budget(max_tokens=1000).reached(totals)


def test_a_long_reason_is_cut_at_a_word_and_says_so() -> None:
    """Regression: piped rows ended mid-word ('… or run this task on its o') and read as whole."""
    from arreio.cli.batch_view import clip, row_line

    advice = "the shell call needs approval; allow it in the config's `governance.policy`, or run this task " * 3
    line = row_line({"task": "t", "attempt": 1, "verdict": "paused", "passed": False, "message": advice})
    why = line.split(" — ", 1)[1]
    assert why.endswith("…") and len(why) <= 200 and advice.startswith(why[:-1])
    assert advice[len(why) - 1] == " "  # cut between words, not inside one
    assert clip("short enough", 200) == "short enough"


def test_a_task_of_a_stopped_batch_with_no_attempt_landed_is_not_finished_not_not_run() -> None:
    """Regression: after Ctrl-C, attempts that were running read 'slow-2  0/0  not run'."""
    from arreio.cli.batch_view import summary_lines

    rows = [row("a", 1, True)]
    for stopped, said in ((None, "not run"), ("cancelled", "not finished")):
        s = summarize(rows, batch_id="x", suite="s.yaml", tasks=["a", "b"], repeat=1, planned=2, stopped=stopped)
        (line,) = [ln for ln in summary_lines(s, None) if ln.strip().startswith("b ")]
        assert line.split() == ["b", "0/0", *said.split()]

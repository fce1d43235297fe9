"""The batch's summary, folded from its rows one at a time (pure: rows in, a dict out).

Per task: attempts, passed, pass rate, pass@1 and pass@k (k = the attempts each task got, the
unbiased estimator 1 − C(n−c, k)/C(n, k)). Overall: attempts, passed, pass rate, pass@k as the mean
over tasks, mean and p90 duration, tokens in/out/cached, cost (None when some attempt's price was
unknown: then `cost_known_usd` holds what is known), cache share, attempts retried after their
worker died. `exit_code` follows the rule in `exit_code_for`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

SUMMARY_VERSION = 1


@dataclass
class Totals:
    """Running sums a scheduler keeps while the batch runs (the budget is checked on them)."""

    attempts: int = 0
    passed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0
    retried: int = 0

    def add(self, row: dict[str, Any]) -> None:
        self.attempts += 1
        self.passed += bool(row.get("passed"))
        self.input_tokens += int(row.get("input_tokens") or 0)
        self.output_tokens += int(row.get("output_tokens") or 0)
        self.cached_tokens += int(row.get("cached_tokens") or 0)
        self.cache_write_tokens += int(row.get("cache_write_tokens") or 0)
        if row.get("cost_usd") is None:
            self.cost_unknown += 1
        else:
            self.cost_usd += float(row["cost_usd"])
        self.retried += int(row.get("tries") or 1) > 1

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def failed(self) -> int:
        return self.attempts - self.passed


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k attempts drawn from n (c of them correct) passes."""
    if n <= 0 or k <= 0:
        return 0.0
    k = min(k, n)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (p90: share 0.9); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass
class _Task:
    attempts: int = 0
    passed: int = 0
    reasons: list[str] = field(default_factory=list)  # the first few failures' reasons


def exit_code_for(totals: Totals, *, planned: int, min_pass_rate: float | None, stopped: str | None) -> int:
    """4 when a budget stopped the batch before every attempt ran; else 0 when every attempt passed
    (or, with --min-pass-rate R, the pass rate reached R); else 1."""
    if stopped:
        return 4
    if totals.attempts < planned:
        return 1
    if min_pass_rate is not None:
        return 0 if totals.attempts and totals.passed / totals.attempts >= min_pass_rate else 1
    return 0 if totals.attempts and totals.passed == totals.attempts else 1


def summarize(
    rows: Iterable[dict[str, Any]],
    *,
    batch_id: str,
    suite: str,
    tasks: list[str],
    repeat: int,
    planned: int,
    min_pass_rate: float | None = None,
    stopped: str | None = None,
    wall_s: float | None = None,
    learning: dict[str, Any] | None = None,
) -> dict[str, Any]:
    totals = Totals()
    per_task: dict[str, _Task] = {t: _Task() for t in tasks}
    durations: list[float] = []
    verdicts: dict[str, int] = {}
    for row in rows:
        task = per_task.get(row["task"])
        if task is None:  # a row of a task filtered out this time (a resume with another --filter)
            continue
        totals.add(row)
        task.attempts += 1
        task.passed += bool(row.get("passed"))
        if not row.get("passed") and len(task.reasons) < 3:
            verdict = row.get("verdict")  # a message may start with its verdict ("paused: …"): said once
            said = (row.get("message") or "").removeprefix(f"{verdict}: ")
            task.reasons.append(f"#{row['attempt']} {verdict}: {said}".strip())
        durations.append(float(row.get("duration_s") or 0.0))
        verdicts[str(row.get("verdict"))] = verdicts.get(str(row.get("verdict")), 0) + 1
    ks = sorted({1, repeat})
    tasks_out = {}
    for name, t in per_task.items():
        tasks_out[name] = {
            "attempts": t.attempts,
            "passed": t.passed,
            "pass_rate": round(t.passed / t.attempts, 4) if t.attempts else None,
            "pass_at": {str(k): round(pass_at_k(t.attempts, t.passed, k), 4) for k in ks if t.attempts},
            "failures": t.reasons,
        }
    ran = [t for t in per_task.values() if t.attempts]
    cache_base = totals.input_tokens + totals.cached_tokens + totals.cache_write_tokens  # as pricing.cache_share
    return {
        "version": SUMMARY_VERSION,
        "batch": batch_id,
        "suite": suite,
        "repeat": repeat,
        "planned": planned,
        "attempts": totals.attempts,
        "passed": totals.passed,
        "failed": totals.failed,
        "pass_rate": round(totals.passed / totals.attempts, 4) if totals.attempts else None,
        "pass_at": {str(k): round(sum(pass_at_k(t.attempts, t.passed, k) for t in ran) / len(ran), 4) for k in ks}
        if ran
        else {},
        "verdicts": verdicts,
        "duration_s": {
            "mean": round(sum(durations) / len(durations), 3) if durations else 0.0,
            "p90": round(percentile(durations, 0.9), 3),
        },
        "wall_s": round(wall_s, 3) if wall_s is not None else None,
        "tokens": {"input": totals.input_tokens, "output": totals.output_tokens, "cached": totals.cached_tokens},
        "cost_usd": None if totals.cost_unknown else round(totals.cost_usd, 6),
        "cost_known_usd": round(totals.cost_usd, 6),
        "cache_share": round(totals.cached_tokens / cache_base, 4) if cache_base else 0.0,
        "retried": totals.retried,
        "stopped": stopped,
        "min_pass_rate": min_pass_rate,
        "learning": learning,
        "exit_code": exit_code_for(totals, planned=planned, min_pass_rate=min_pass_rate, stopped=stopped),
        "tasks": tasks_out,
    }

"""The records the pipeline writes into the substores after a run, with their payload shapes fixed.

One transcript record per run (where the session and the run report are), one episodic record per
run (what was asked, how it went), and a decision record for each decision the run made (approvals,
gate verdicts). Keeping the shapes here means `arreio memory <substore> show` and the learning pass
read one format, whoever writes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from arreio.memory.substores import SubstoreRecord, Substores


def record_transcript(
    substores: Substores, agent: str, *, run_id: str, session_id: str, session_path: str, report_path: str
) -> SubstoreRecord:
    """Pointer from a run to its session file and its `report.json` (paths as given, usually relative)."""
    return substores.append(
        "transcript",
        agent,
        {"run_id": run_id, "session_id": session_id, "session_path": session_path, "report_path": report_path},
    )


def record_episode(
    substores: Substores,
    agent: str,
    *,
    run_id: str,
    goal: str,
    verdict: str,
    tools_used: Iterable[str] = (),
    cost_usd: float | None = None,
    summary: str = "",
) -> SubstoreRecord:
    """What one run was asked and how it ended. `tools_used` is deduplicated, order kept."""
    return substores.append(
        "episodic",
        agent,
        {
            "run_id": run_id,
            "goal": goal,
            "verdict": verdict,
            "tools_used": list(dict.fromkeys(tools_used)),
            "cost_usd": cost_usd,
            "summary": summary,
        },
    )


def record_decision(
    substores: Substores,
    agent: str,
    *,
    kind: str,
    subject: str,
    verdict: str,
    reason: str = "",
    run_id: str = "",
    details: dict[str, Any] | None = None,
) -> SubstoreRecord:
    """A decision: `kind` is e.g. "approval" or "gate", `subject` what was decided on (a tool call,
    a gate name), `verdict` the outcome ("approved", "denied", "passed", "failed", ...)."""
    payload: dict[str, Any] = {"kind": kind, "subject": subject, "verdict": verdict, "reason": reason}
    if run_id:
        payload["run_id"] = run_id
    if details:
        payload["details"] = dict(details)
    return substores.append("decision", agent, payload)

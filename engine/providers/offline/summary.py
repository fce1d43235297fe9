"""The offline model's answer to a summarisation request (context compaction): the goal and every
call of the transcript, as the JSON summary. The request's wording (`GOAL:`, `CALL `, `RESULT `
lines) is compaction's (`engine/context/compaction.py`)."""

from __future__ import annotations

from arreio.engine.core.model_io import ModelRequest
from arreio.engine.core.summary import Summary


def offline_summary(request: ModelRequest) -> str:
    """The offline model's deterministic answer to a summarisation request: the goal and every call
    of the transcript, as the JSON summary. Pure."""
    body = request.messages[-1].text if request.messages else ""
    goal = body.split("GOAL:\n", 1)[-1].split("\n\n", 1)[0].strip() if "GOAL:\n" in body else ""
    calls = [ln[5:].strip() for ln in body.splitlines() if ln.startswith("CALL ")]
    errors = [ln[7:].strip()[:160] for ln in body.splitlines() if ln.startswith("RESULT ") and "(error)" in ln[:60]]
    summary = Summary(goal=goal, done=calls, blocked=errors, next_steps=["continue with the goal"])
    return summary.model_dump_json()

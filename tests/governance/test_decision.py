"""`engine/run/decision.py`: a decision on a paused call, as a library call — the run prepared
once (its redactor, its lock), the decision written through them, then released for the resume."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arreio.engine.core.errors import ArreioError, UsageError
from arreio.engine.governance.feature import GovernanceFeature
from arreio.engine.providers.testing import FixedClock, ScriptedProvider, provider_factory
from arreio.engine.run.decision import decide
from arreio.engine.run.pipeline import PipelineDeps, RunOptions
from arreio.engine.session.lock import SessionLock
from tests.governance.helpers import run

SECRET = "sk-proj-" + "Q7x" * 16
REPLIES = [{"tool_calls": [{"name": "shell", "arguments": {"command": "echo hi > out.txt"}}]}, {"text": "done"}]


def paused(work: Path) -> tuple[str, dict[str, str]]:
    env = {"OPENAI_API_KEY": SECRET}
    events, _ = run(work, REPLIES, env=env)
    assert events[-1].exit_code == 3
    return events[0].session_id, {"PATH": os.environ.get("PATH", ""), "HOME": str(work / "home"), **env}


def deps() -> PipelineDeps:
    return PipelineDeps(
        clock=FixedClock(),
        provider_factory=provider_factory(ScriptedProvider([{"text": "x"}])),
        features=[GovernanceFeature()],
    )


def test_a_denial_goes_through_the_runs_redactor_into_the_session_and_the_journal(work: Path) -> None:
    sid, env = paused(work)
    decision = decide(
        RunOptions(resume=sid[:12], cwd=work, env=env), deps(), approve=False, reason=f"never with {SECRET}"
    )
    assert (decision.session_id, decision.status, decision.pending.name) == (sid, "denied", "shell")
    session_text = (work / ".arreio" / "sessions" / f"{sid}.jsonl").read_text()
    journal = (work / ".arreio" / "audit.jsonl").read_text()
    assert '"status":"denied"' in session_text.replace(" ", "") and '"approval"' in journal
    assert SECRET not in session_text and SECRET not in journal
    # released for the resumed run
    SessionLock(work / ".arreio" / "sessions" / f"{sid}.jsonl").acquire(sid).release()


def test_a_run_that_cannot_resume_keeps_its_decision_unmade(work: Path) -> None:
    sid, env = paused(work)
    with pytest.raises(ArreioError):  # a model no provider serves
        decide(RunOptions(resume=sid, cwd=work, env=env, model="nowhere/no-model"), deps(), approve=True)
    again = decide(RunOptions(resume=sid, cwd=work, env=env), deps(), approve=True)
    assert again.status == "approved"
    with pytest.raises(UsageError, match="already approved"):
        decide(RunOptions(resume=sid, cwd=work, env=env), deps(), approve=True)

"""Pipeline runs with the governance feature, a scripted model and a fixed clock, in a temp folder."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from arreio.engine.governance.feature import GovernanceFeature
from arreio.engine.loop.feature import Feature
from arreio.engine.providers.testing import FixedClock, ScriptedProvider, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end


def write_config(work: Path, text: str) -> None:
    (work / ".arreio").mkdir(parents=True, exist_ok=True)
    (work / ".arreio" / "config.yaml").write_text(text)


def run(
    work: Path,
    replies: list[dict[str, Any]] | ScriptedProvider,
    *,
    goal: str = "Do the work.",
    resume: str | None = None,
    features: list[Feature] = (),
    env: dict[str, str] | None = None,
    yes: bool = False,
    ask=None,
    provider=None,
) -> tuple[list[Any], dict[str, Any]]:
    """One run; returns (events, report.json as a dict)."""
    work.mkdir(parents=True, exist_ok=True)
    if provider is None:
        provider = replies if isinstance(replies, ScriptedProvider) else ScriptedProvider(replies)
    deps = PipelineDeps(
        clock=FixedClock(),
        provider_factory=provider_factory(provider),
        features=[GovernanceFeature(), *features],
        ask_approval=ask,
    )
    base_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work / "home")}
    options = RunOptions(
        goal_text=None if resume else goal, resume=resume, cwd=work, env={**base_env, **(env or {})}, yes=yes
    )
    events = asyncio.run(run_to_end(options, deps))
    report_path = work / events[-1].report_path
    return events, json.loads(report_path.read_text())


def kinds(events: list[Any], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]

"""Running arreio from a program: `run()` streams a run's events, `run_to_result()` drains it into a
`Result`. Both are the CLI's `arreio run`: the same pipeline (engine/run/pipeline.py), wired by
the same composition root (cli/deps.py: memory, skills, knowledge, the learning pass), under the same
config, sandbox and policy of the working directory. No agent is assembled here.

Approvals: a program usually has nobody at a terminal. By default (`approve="refuse"`) a call that
policy would put to a person is refused — the model is told it was refused and why, and the refusal is
on the `Result` — so a run never waits. `approve="pause"` leaves the run paused as `arreio run` does
without a terminal (verdict `paused`, exit code 3; `arreio approve ID` decides later). A callable gets
each `ApprovalRequired` event and answers True (run it) or False; it is called on the run's event loop,
so it must answer quickly (ask a person elsewhere and `"pause"` when that takes time).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from arreio.engine.core import events as ev

__all__ = ["Approve", "Refusals", "Result", "run", "run_sync", "run_to_result"]

Approve = Literal["refuse", "pause"] | Callable[[ev.ApprovalRequired], bool]


@dataclass(frozen=True)
class Result:
    """How a run ended, from its `done` event. `ok` is a success verdict; `refused` lists the calls
    that policy refused because nobody could approve them (what would have run, and why it asked)."""

    verdict: str
    exit_code: int
    final_text: str
    session_id: str | None
    message: str = ""
    cost_usd: float | None = None
    report_path: str | None = None
    steps: int = 0
    tool_calls: int = 0
    changes: dict[str, list[str]] | None = None
    final_json: Any = None
    refused: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verdict == "success"


class Refusals:
    """The ask of a run nobody watches: every approval is refused, and named in the journal and to the
    model as refused by policy (`by`). `refused` keeps what was refused, for the result."""

    def __init__(self, door: str) -> None:
        self.by = f"policy: no person answers approvals for {door}"
        self.refused: list[str] = []

    def __call__(self, event: ev.ApprovalRequired) -> bool:
        self.refused.append(f"{event.summary} ({event.reason})" if event.reason else event.summary)
        return False


async def run(
    goal: str | None = None,
    *,
    cwd: str | Path | None = None,
    model: str | None = None,
    max_steps: int | None = None,
    resume: str | None = None,
    plan: str | Path | None = None,
    tools: list[str] | None = None,
    no_tools: list[str] | None = None,
    yes: bool = False,
    approve: Approve = "refuse",
    learn: bool = False,
    output_schema: str | Path | dict[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    script: str | Path | None = None,
    _refusals: Refusals | None = None,
) -> AsyncIterator[ev.Event]:
    """Run `goal` (the goal's text) in `cwd` (default: the current directory) and yield every event,
    the last one always `done`. `resume` continues a saved session (its id; `goal` is then the new
    instruction, or None to go on where it stopped). Bad input (no goal, an unknown session, a bad
    model name) raises `arreio.api.UsageError` / `ConfigError` before anything is written; failures
    during the run end it with a failed `done`, never an exception (a bug, an exception that is no
    `ArreioError`, is raised after its failed `done`). Cancel the consuming task to
    stop a run: the session stays valid and the report lands. `script` plays a scripted offline model
    (as `arreio run --script`): for testing what a program does with the events."""
    from arreio.api.composition import pipeline_deps
    from arreio.engine.run.pipeline import run_pipeline

    options = _options(
        goal,
        cwd=cwd,
        model=model,
        max_steps=max_steps,
        resume=resume,
        plan=plan,
        tools=tools,
        no_tools=no_tools,
        yes=yes,
        learn=learn,
        output_schema=output_schema,
        env=env,
        script=script,
    )
    deps = pipeline_deps()
    if callable(approve):
        deps.ask_approval = approve
    elif approve == "refuse":
        deps.ask_approval = _refusals or Refusals("a program that embeds arreio")
    elif approve != "pause":
        from arreio.engine.core.errors import UsageError

        raise UsageError(f"approve={approve!r}: give 'refuse', 'pause' or a function")
    async for event in run_pipeline(options, deps):
        yield event


async def run_to_result(goal: str | None = None, **kwargs: Any) -> Result:
    """`run()` drained: the same arguments, the `Result` of its `done` event."""
    refusals = kwargs.pop("_refusals", None)
    if kwargs.get("approve", "refuse") == "refuse":
        refusals = refusals or Refusals("a program that embeds arreio")
    done: ev.Done | None = None
    async for event in run(goal, _refusals=refusals, **kwargs):
        if event.type == "done" and event.agent is None:
            done = event
    assert done is not None  # the pipeline's last event is always `done`
    return Result(
        verdict=done.verdict,
        exit_code=done.exit_code,
        final_text=done.final_text,
        session_id=done.session_id,
        message=done.message,
        cost_usd=done.cost_usd,
        report_path=done.report_path,
        steps=done.steps,
        tool_calls=done.tool_calls,
        changes=done.changes,
        final_json=done.final_json,
        refused=list(refusals.refused) if refusals is not None else [],
    )


def run_sync(goal: str | None = None, **kwargs: Any) -> Result:
    """`run_to_result()` for a program without an event loop of its own."""
    return asyncio.run(run_to_result(goal, **kwargs))


def _options(
    goal: str | None,
    *,
    cwd: str | Path | None,
    model: str | None,
    max_steps: int | None,
    resume: str | None,
    plan: str | Path | None,
    tools: list[str] | None,
    no_tools: list[str] | None,
    yes: bool,
    learn: bool,
    output_schema: Any,
    env: Mapping[str, str] | None,
    script: str | Path | None,
) -> Any:

    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.ports import process_env
    from arreio.engine.run.prepare import RunOptions

    where = Path(cwd).expanduser() if cwd is not None else Path.cwd()
    if not where.is_dir():
        raise UsageError(f"cwd {where}: no such folder")
    if goal is not None and not goal.strip():
        raise UsageError("the goal is empty")
    if goal is None and resume is None and plan is None:
        raise UsageError("nothing to run: give a goal, a plan, or a session to resume")
    if max_steps is not None and max_steps < 1:
        raise UsageError(f"max_steps {max_steps}: give 1 or more")
    schema = Path(output_schema) if isinstance(output_schema, str) else output_schema
    return RunOptions(
        goal_text=goal,
        model=model,
        resume=resume,
        max_steps=max_steps,
        yes=yes,
        tools=list(tools) if tools is not None else None,
        no_tools=list(no_tools or []),
        plan=Path(plan) if plan is not None else None,
        learn=learn,
        output_schema=schema,
        cwd=where.resolve(),
        env=dict(env) if env is not None else process_env(),
        script=(where / Path(script).expanduser()) if script is not None else None,
    )

"""The learning stage of the conveyor (docs/architecture.md section 2): only with `--learn`, only after the gates
passed, never fatal to the run. The pass itself is the `learning` layer's, wired in by `cli/deps.py`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from arreio.engine.core import events as ev
from arreio.engine.tools.run_context import RunContext


class LearningPass(Protocol):
    """The `--learn` stage (supplied by the `learning` layer through `cli/deps.py`)."""

    async def run(
        self,
        ctx: RunContext,
        *,
        events: list[Any],
        messages: list,
        goal: str,
        model: str,
        config: dict[str, Any] | None = None,
    ) -> ev.LearningPassDone: ...


async def run_learning(
    learning: LearningPass | None,
    ctx: RunContext,
    *,
    events: list[Any],
    messages: list,
    goal: str,
    model: str,
    config: dict[str, Any],
) -> AsyncIterator[ev.Event]:
    """The learning pass: only after the gates passed, never fatal (a failure is an event and a warning)."""
    if learning is None:
        yield ev.Warning_(message="--learn: the learning layer is not wired in this build", code="learning")
        return
    try:
        done = await learning.run(ctx, events=events, messages=messages, goal=goal, model=model, config=config)
    except Exception as exc:  # noqa: BLE001 - the pass is non-fatal by contract
        done = ev.LearningPassDone(error=f"{type(exc).__name__}: {exc}")
    yield done
    if done.error:
        yield ev.Warning_(message=f"learning pass failed closed, nothing applied: {done.error}", code="learning")

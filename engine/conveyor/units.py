"""The execution, gates and learning stages of the conveyor (DESIGN.md section 2), kept apart from
`pipeline.py` so each stays short. Each stage is an async generator of events."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arreio.engine import events as ev
from arreio.engine.conveyor.gates import GateInputs, Judge, evaluate_gate
from arreio.engine.conveyor.plan import UNIT_RECORD, Plan, PlanProgress, Unit
from arreio.engine.conveyor.runner import Outcome, Runner
from arreio.engine.errors import ConfigError, UsageError
from arreio.engine.feature import RunContext
from arreio.engine.ports import Provider
from arreio.engine.tools.registry import ToolRegistry


class LearningPass(Protocol):
    """The `--learn` stage (supplied by the `learning` layer through `cli/deps.py`)."""

    async def run(self, ctx: RunContext, *, events: list[Any], messages: list, goal: str, model: str,
                  config: dict[str, Any] | None = None) -> ev.LearningPassDone: ...


def goal_title(text: str) -> str:
    first = next((ln.strip().lstrip("#").strip() for ln in text.splitlines() if ln.strip()), "")
    return first[:100]


def unit_message(plan: Plan, unit: Unit, goal: str | None, first: bool) -> str:
    """The user message that starts a unit. A one-unit run sends the goal as it is."""
    if not plan.from_file:
        return goal or unit.goal
    text = f"Unit '{unit.id}': {unit.goal.strip()}"
    if first and goal:
        return f"{goal.strip()}\n\n---\n{text}"
    return text


@dataclass
class UnitRunner:
    """Runs a plan's units in order on one runner; per-unit tools, model and script."""

    plan: Plan
    runner: Runner
    tools: ToolRegistry
    goal: str | None
    resume_only: bool  # continue the history without a new message (`--resume` without `--goal`)
    # (model or None for the run's own, a unit's script or None, the session turn it starts at)
    make_provider: Callable[[str | None, Path | None, int], Provider]
    default_model: str
    plan_dir: Path = field(default_factory=Path.cwd)
    progress: PlanProgress = field(default_factory=PlanProgress)  # a resumed plan run: where it stopped
    max_steps: int | None = None  # `--max-steps`: given on the command line, it beats the units' own
    _swapped: bool = field(default=False, init=False)  # the runner holds a unit's own provider, not the run's

    async def run(self) -> AsyncIterator[ev.Event]:
        is_plan = self.plan.from_file
        if is_plan:
            units = self.progress.remaining(self.plan, instructed=self.goal is not None)
        else:
            units = self.plan.ordered()
        if not units:  # every unit was done before (the gates failed): the gates judge the work again
            self.runner.outcome = Outcome("success", 0, "", self.runner.last_text())
            return
        self.check(units)
        for index, unit in enumerate(units):
            turns = self._turns()
            first_turn = self.progress.first_turn(unit.id)
            self._configure(unit, turns if first_turn is None else first_turn)
            text = self._opening(unit, index, is_plan)
            if text is None:
                title = f"continue session {self.runner.session.id}"
            else:
                title = goal_title(text if not is_plan else unit.goal)
            if is_plan and unit.id not in self.progress.started:
                record = {"type": UNIT_RECORD, "unit": unit.id, "event": "start", "turns": turns}
                self.runner.session.append_record(record)
            yield ev.UnitStart(unit_id=unit.id, goal=title)
            async for event in self.runner.run(text, unit_id=unit.id, max_steps=self.max_steps or unit.max_steps):
                yield event
            if self.runner.outcome.verdict != "success":
                return
            if is_plan:
                self.runner.session.append_record({"type": UNIT_RECORD, "unit": unit.id, "event": "done"})

    def _opening(self, unit: Unit, index: int, is_plan: bool) -> str | None:
        """The message a unit starts with: none to just go on, a resume's note or new instruction
        inside a unit that had started, else the unit's own message."""
        if index == 0 and is_plan and unit.id in self.progress.started:
            return self.goal
        if index == 0 and self.resume_only and not is_plan:
            return None
        return unit_message(self.plan, unit, self.goal if index == 0 else None, index == 0)

    def check(self, units: list[Unit]) -> None:
        """Every unit's tools, model and script, before the first unit runs: a typo in the last unit
        must not surface after the first ones did their work."""
        from arreio.engine.providers.registry import check_model

        for unit in units:
            unknown = [n for n in unit.tools or [] if n not in self.tools]
            if unknown:
                raise UsageError(f"{self.plan.source}: unit '{unit.id}' names unknown tool(s) {', '.join(unknown)}")
            if unit.script and not (self.plan_dir / unit.script).is_file():
                raise UsageError(f"{self.plan.source}: unit '{unit.id}' names a missing script: {unit.script}")
            if unit.model:
                try:
                    check_model(unit.model)
                except ConfigError as error:
                    raise ConfigError(f"{self.plan.source}: unit '{unit.id}': {error.message}") from None

    def _turns(self) -> int:
        from arreio.engine.context.compaction import summarised_turns

        messages = self.runner.session.messages
        return sum(1 for m in messages if m.role == "assistant") + summarised_turns(messages)

    def _configure(self, unit: Unit, first_turn: int) -> None:
        self.runner.tools = self.tools.subset(unit.tools) if unit.tools is not None else self.tools
        if unit.model or unit.script:
            model = unit.model or self.default_model
            script = (self.plan_dir / unit.script) if unit.script else None
            self.runner.provider = self.make_provider(model, script, first_turn)
            self.runner.model = model
            self._swapped = True
        elif self._swapped:  # the unit before had its own: this one goes back to the run's
            self.runner.provider = self.make_provider(None, None, 0)
            self.runner.model = self.default_model
            self._swapped = False


async def run_gates(plan: Plan, inputs: GateInputs, judge: Judge | None, failures: list[str]) -> AsyncIterator[ev.Event]:
    """Every gate yields a `gate_result`; failures are collected for the verdict."""
    for spec in plan.gates:
        outcome = await evaluate_gate(spec, inputs, judge)
        yield ev.GateResult(gate=outcome.gate, passed=outcome.passed, detail=outcome.detail)
        if not outcome.passed:
            failures.append(f"{outcome.gate} — {outcome.detail}")
            if spec.kind == "promise":
                yield ev.Warning_(message=f"the final answer promised what is not so: {outcome.detail}", code="promise")


def gated_outcome(outcome: Outcome, failures: list[str]) -> Outcome:
    if not failures:
        return outcome
    message = f"{len(failures)} gate(s) failed: " + "; ".join(failures)
    return Outcome("failed", 1, message, outcome.final_text)


async def run_learning(
    learning: LearningPass | None, ctx: RunContext, *, events: list[Any], messages: list, goal: str, model: str,
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

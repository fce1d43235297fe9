"""The execution stage of the conveyor (docs/architecture.md section 2): a plan's units, in dependency order, on
one runner — each with its own opening message, tools, model or script."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arreio.engine.core import events as ev
from arreio.engine.core.errors import ConfigError, UsageError
from arreio.engine.core.ports import Provider
from arreio.engine.core.prompt import PLAN_UNITS
from arreio.engine.core.summary import summarised_turns
from arreio.engine.loop.runner import Runner
from arreio.engine.providers.registry import check_model
from arreio.engine.run.plan import UNIT_RECORD, Plan, PlanProgress, Unit
from arreio.engine.tools.registry import ToolRegistry


def goal_title(text: str) -> str:
    first = next((ln.strip().lstrip("#").strip() for ln in text.splitlines() if ln.strip()), "")
    return first[:100]


def unit_message(plan: Plan, unit: Unit, goal: str | None, first: bool) -> str:
    """The user message that starts a unit. A one-unit run sends the goal as it is; a plan's first unit
    with a goal (`--goal` with `--plan`) sends the goal as what the whole plan is for, then its own
    instruction as the part to do now (the whole goal in unit one did the next units' work early)."""
    if not plan.from_file:
        return goal or unit.goal
    text = f"Unit '{unit.id}': {unit.goal.strip()}"
    if first and goal:
        return f"{goal.strip()}{PLAN_UNITS}{text}"
    return text


def check_units(plan: Plan, units: list[Unit], tools: ToolRegistry, plan_dir: Path) -> None:
    """Every unit's tools, model and script: a typo in the last unit must not surface after the
    first ones did their work — nor after a session was made for a plan that cannot run (prepare
    calls this before it makes one; `--continue` then picked that empty session)."""
    for unit in units:
        unknown = [n for n in unit.tools or [] if n not in tools]
        if unknown:
            raise UsageError(f"{plan.source}: unit '{unit.id}' names unknown tool(s) {', '.join(unknown)}")
        if unit.script and not (plan_dir / unit.script).is_file():
            raise UsageError(f"{plan.source}: unit '{unit.id}' names a missing script: {unit.script}")
        if unit.model:
            try:
                check_model(unit.model)
            except ConfigError as error:
                raise ConfigError(f"{plan.source}: unit '{unit.id}': {error.message}") from None


@dataclass
class UnitRunner:
    """Runs a plan's units in order on one runner; per-unit tools, model and script. Each unit's
    events pass through; a unit that does not succeed ends the plan (its `unit_end` says why)."""

    plan: Plan
    runner: Runner
    tools: ToolRegistry
    goal: str | None
    resume_only: bool  # continue the history without a new message (`--resume` without `--goal`)
    # (model or None for the run's own, a unit's script or None, the session turn it starts at)
    unit_provider: Callable[[str | None, Path | None, int], Provider]
    default_model: str
    plan_dir: Path = field(default_factory=Path.cwd)
    progress: PlanProgress = field(default_factory=PlanProgress)  # a resumed plan run: where it stopped
    max_steps: int | None = None  # `--max-steps`: given on the command line, it beats the units' own
    # `--output-schema`: the schema of the run's answer — the last unit's (it beats that unit's own)
    output_schema: dict[str, Any] | None = None

    async def run(self) -> AsyncIterator[ev.Event]:
        """Every remaining unit's events. No events at all when every unit was done before (the
        gates failed last time): the gates judge the work again."""
        is_plan = self.plan.from_file
        if is_plan:
            units = self.progress.remaining(self.plan, instructed=self.goal is not None)
        else:
            units = self.plan.ordered()
        self.check(units)
        session = self.runner.session
        for index, unit in enumerate(units):
            turns = self._turns()
            first_turn = self.progress.first_turn(unit.id)
            provider, model = self._provider_for(unit, turns if first_turn is None else first_turn)
            text = self._opening(unit, index, is_plan)
            if text is None:
                title = f"continue session {session.id}"
            else:
                title = goal_title(text if not is_plan else unit.goal)
            if is_plan and unit.id not in self.progress.started:
                session.append_record({"type": UNIT_RECORD, "unit": unit.id, "event": "start", "turns": turns})
            yield ev.UnitStart(unit_id=unit.id, goal=title)
            tools = self.tools.subset(unit.tools) if unit.tools is not None else self.tools
            verdict = "success"
            schema = self._schema(unit)
            async for event in self.runner.run(
                text,
                unit_id=unit.id,
                max_steps=self.max_steps or unit.max_steps,
                provider=provider,
                model=model,
                tools=tools,
                output_schema=schema,
            ):
                if event.type == "unit_end" and event.agent is None:
                    verdict = event.verdict
                yield event
            if verdict != "success":
                return
            if is_plan:
                session.append_record({"type": UNIT_RECORD, "unit": unit.id, "event": "done"})

    def _schema(self, unit: Unit) -> dict[str, Any] | None:
        """The schema `unit`'s answer must meet: `--output-schema` for the plan's last unit, else its own."""
        if self.output_schema is not None and unit.id == self.plan.ordered()[-1].id:
            return self.output_schema
        return unit.output_schema if isinstance(unit.output_schema, dict) else None

    def _opening(self, unit: Unit, index: int, is_plan: bool) -> str | None:
        """The message a unit starts with: none to just go on, a resume's note or new instruction
        inside a unit that had started, else the unit's own message."""
        if index == 0 and is_plan and unit.id in self.progress.started:
            return self.goal
        if index == 0 and self.resume_only and not is_plan:
            return None
        return unit_message(self.plan, unit, self.goal if index == 0 else None, index == 0)

    def check(self, units: list[Unit]) -> None:
        """Every unit's tools, model and script, before the first unit runs (`check_units`)."""
        check_units(self.plan, units, self.tools, self.plan_dir)

    def _turns(self) -> int:
        messages = self.runner.session.messages
        return sum(1 for m in messages if m.role == "assistant") + summarised_turns(messages)

    def _provider_for(self, unit: Unit, first_turn: int) -> tuple[Provider | None, str | None]:
        """The unit's own provider and model, or (None, None) for the runner's own: a unit's own
        serve that unit alone (the runner does not keep them for the next)."""
        if unit.model or unit.script:
            model = unit.model or self.default_model
            script = (self.plan_dir / unit.script) if unit.script else None
            return self.unit_provider(model, script, first_turn), model
        return None, None

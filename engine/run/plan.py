"""Plans: units of work in dependency order, and the gates that judge the result (docs/architecture.md section 2).

```yaml
version: 1
units:
  - id: gather
    goal: Read the notes in fixtures/quickstart/.
  - id: write
    goal: Write build/summary.md from what you read.
    needs: [gather]
    tools: [write_file, read_file]      # optional: restrict the unit's tools
    model: offline                      # optional: another model for this unit
    script: scripts/write.yaml          # optional: an offline script for this unit
  - id: verdict
    goal: Say whether build/summary.md covers every note.
    needs: [write]
    output_schema: schemas/verdict.json # optional: the unit's answer is JSON valid against it (or inline)
gates:
  - {kind: file, path: build/summary.md, pattern: "^# "}
  - {kind: command, command: "test -s build/summary.md", timeout_s: 30}
  - {kind: promise}
  - {kind: validator, min: 0.7}
learning:
  gate: {kind: validator, min: 0.8}
```
Every problem is one `UsageError` naming the file, the line and what is wrong (exit 2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from arreio.engine.core.errors import UsageError
from arreio.engine.core.regular_file import Limit
from arreio.engine.core.yaml_file import line_of, read_yaml, validated
from arreio.engine.judgement.gate_spec import GateSpec
from arreio.engine.loop.answer import check_schema, load_schema

PLAN_VERSION = 1


class Unit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    goal: str = Field(min_length=1)
    needs: list[str] = Field(default_factory=list)
    tools: list[str] | None = None
    model: str | None = None
    script: str | None = None
    max_steps: int | None = Field(None, ge=1)
    # The unit's answer must be JSON valid against this schema: inline, or a file next to the plan
    # (read and checked by `load_plan`, so a loaded unit always holds the schema itself)
    output_schema: dict[str, Any] | str | None = None

    @field_validator("output_schema", mode="before")
    @classmethod
    def _schema_or_file(cls, value: Any) -> Any:
        """One message for every wrong shape (pydantic would name its union branches instead)."""
        if value is None or isinstance(value, (dict, str)):
            return value
        raise ValueError(f"a JSON Schema (a mapping) or the path of a schema file, not {type(value).__name__}")


UNIT_RECORD = "unit"  # the session record marking a plan unit's start and completion
GOAL_ONLY = "(goal)"  # the `source` of the one-unit plan a run without `--plan` gets


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = PLAN_VERSION
    units: list[Unit] = Field(min_length=1)
    gates: list[GateSpec] = Field(default_factory=list)
    learning: dict[str, Any] = Field(default_factory=dict)
    source: str = Field("", exclude=True)

    @property
    def from_file(self) -> bool:
        """A `--plan` file, not the one-unit plan made from a goal."""
        return self.source != GOAL_ONLY

    def ordered(self) -> list[Unit]:
        """Units in dependency order (stable: file order among equals)."""
        done: list[str] = []
        remaining = list(self.units)
        while remaining:
            ready = [u for u in remaining if all(n in done for n in u.needs)]
            if not ready:  # validated away in `load_plan`; kept as a guard
                raise UsageError(f"{self.source}: units {', '.join(u.id for u in remaining)} depend on each other")
            done.append(ready[0].id)
            remaining.remove(ready[0])
        by_id = {u.id: u for u in self.units}
        return [by_id[i] for i in done]


def load_plan(path: Path) -> Plan:
    """Read and validate a plan file."""

    data = read_yaml(path, error=UsageError, what="plan", typ="rt", limit=Limit.PLAN)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a plan is a mapping with `units:` (and optional `gates:`)")
    plan = validated(Plan, data, path, error=UsageError)
    plan.source = str(path)
    if plan.version > PLAN_VERSION:
        raise UsageError(f"{path}: plan version {plan.version} is newer than this arreio understands ({PLAN_VERSION})")
    _check_graph(plan, data, path)
    _load_schemas(plan, data, path)
    return plan


def _load_schemas(plan: Plan, data: Any, path: Path) -> None:
    """Each unit's `output_schema`: a file (relative to the plan) is read, and either form checked."""
    for i, unit in enumerate(plan.units):
        if unit.output_schema is None:
            continue
        line = line_of(data, ("units", i, "output_schema"))
        where = f"{path}{f':{line}' if line else ''}: units.{i}.output_schema"
        if isinstance(unit.output_schema, dict):
            unit.output_schema = check_schema(unit.output_schema, where)
            continue
        try:
            unit.output_schema = load_schema(path.parent / unit.output_schema, shown=unit.output_schema)
        except UsageError as error:
            raise UsageError(f"{where}: {error.message}") from None


def _check_graph(plan: Plan, data: Any, path: Path) -> None:
    ids: dict[str, int] = {}
    for i, unit in enumerate(plan.units):
        if unit.id in ids:
            line = line_of(data, ("units", i, "id"))
            raise UsageError(f"{path}{f':{line}' if line else ''}: duplicate unit id '{unit.id}'")
        ids[unit.id] = i
    for i, unit in enumerate(plan.units):
        for j, need in enumerate(unit.needs):
            if need not in ids:
                line = line_of(data, ("units", i, "needs", j))
                raise UsageError(f"{path}{f':{line}' if line else ''}: unit '{unit.id}' needs unknown unit '{need}'")
    # cycle check: depth-first with colours
    state: dict[str, int] = {}

    def visit(uid: str, trail: list[str]) -> None:
        state[uid] = 1
        for need in plan.units[ids[uid]].needs:
            if state.get(need) == 1:
                cycle = " → ".join([*trail[trail.index(need) :], need]) if need in trail else f"{uid} → {need}"
                line = line_of(data, ("units", ids[uid], "needs"))
                raise UsageError(f"{path}{f':{line}' if line else ''}: dependency cycle: {cycle}")
            if state.get(need) is None:
                visit(need, [*trail, need])
        state[uid] = 2

    for unit in plan.units:
        if state.get(unit.id) is None:
            visit(unit.id, [unit.id])
    for k, gate in enumerate(plan.gates):
        missing = {"command": gate.command, "file": gate.path}.get(gate.kind, "ok")
        if missing is None:
            what = "command" if gate.kind == "command" else "path"
            line = line_of(data, ("gates", k))
            raise UsageError(f"{path}{f':{line}' if line else ''}: gate {k + 1} ({gate.kind}) needs `{what}:`")


def kept_form(plan: Plan) -> dict[str, Any]:
    """The plan as its session keeps it (header `plan_spec`): units and gates as loaded, schema files read in."""
    return plan.model_dump(mode="json")


def resumed_plan(
    source: str, kept: dict[str, Any] | None, redacted: Callable[[dict[str, Any]], dict[str, Any]]
) -> tuple[Plan, str | None]:
    """The plan a resumed session goes on with, and what to say about the file. It is the copy the
    session kept when it started, never the file as it is now: the file sits in the project, where the
    agent can write, and a plan read again on resume would let it drop its own gates. The file is read
    only to say that it changed (or is gone). `redacted`: the kept copy as the session file stores it
    (a secret in the plan is hidden there); a file that reads as the kept copy is the same plan and is
    used, secrets and all. A session from before plans were kept (format 2) has no copy: its file is
    read, as then, and that is said."""
    path = Path(source)
    if kept is None:
        if not path.is_file():
            raise UsageError(f"the session runs the plan {source}, which no longer exists; restore it to resume")
        return load_plan(path), (
            f"this session predates kept plans: its plan is read again from {source} "
            "(a file the agent could change); start a new run to have it kept"
        )
    current: Plan | None = None
    if path.is_file():  # a regular file only: never a FIFO the agent left in its place
        try:
            current = load_plan(path)
        except UsageError:
            current = None
    if current is not None and kept in (kept_form(current), redacted(kept_form(current))):
        return current, None
    try:
        plan = Plan.model_validate(kept)
    except ValidationError as error:
        raise UsageError(f"the plan this session kept cannot be read ({error.error_count()} problems)") from None
    plan.source = source
    what = "is gone" if not path.exists() else "changed since the session started"
    return plan, (
        f"plan {source} {what}: the session goes on with the plan it started with (its units and "
        "gates as they were); start a new run to use the file as it is now"
    )


def single_unit_plan(goal: str) -> Plan:
    """No `--plan`: the goal is one unit and the promise gate runs by default."""
    return Plan(units=[Unit(id="main", goal=goal or "continue")], gates=[GateSpec(kind="promise")], source=GOAL_ONLY)


@dataclass(frozen=True)
class PlanProgress:
    """How far a plan run got, read back from its session: the `unit` records the unit runner
    appends (`{"type": "unit", "unit": ID, "event": "start" | "done"}`). A resume runs the units not
    done yet, continuing inside the one that had started."""

    started: frozenset[str] = frozenset()
    done: frozenset[str] = frozenset()
    first_turns: tuple[tuple[str, int], ...] = ()  # (unit, the session's turn count when it started)

    @classmethod
    def of(cls, session: Any) -> PlanProgress:
        started: set[str] = set()
        done: set[str] = set()
        first: dict[str, int] = {}
        for record in session.extra:
            if record.get("type") == UNIT_RECORD:
                unit = str(record.get("unit"))
                (done if record.get("event") == "done" else started).add(unit)
                if record.get("event") == "start" and isinstance(record.get("turns"), int):
                    first.setdefault(unit, record["turns"])
        return cls(frozenset(started), frozenset(done), tuple(first.items()))

    def first_turn(self, unit: str) -> int | None:
        return dict(self.first_turns).get(unit)

    def remaining(self, plan: Plan, *, instructed: bool = False) -> list[Unit]:
        """Units still to run, in order. When every unit is done (the gates failed afterwards):
        none, so a resume re-runs the gates — or, with a new instruction, the last unit again."""
        ordered = plan.ordered()
        left = [u for u in ordered if u.id not in self.done]
        return left or (ordered[-1:] if instructed else [])

    def all_done(self, plan: Plan) -> bool:
        return all(u.id in self.done for u in plan.units)

    def next_is_new(self, plan: Plan) -> bool:
        """True when the next unit has not started: it opens with its own message, so the history
        needs no continuation note."""
        left = [u for u in plan.ordered() if u.id not in self.done]
        return bool(left) and left[0].id not in self.started

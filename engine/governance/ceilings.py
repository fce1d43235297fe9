"""Ceilings and budgets as a turn-loop hook (docs/architecture.md invariants 6-7).

Independent ceilings, each landing the run with a reserve turn (tools withdrawn, the model asked to
finish with what it has, verdict `partial`, exit 4):

- `tool_calls`  tool calls per run (`governance.max_tool_calls`); calls beyond it in a round are not run
- `repetition`  the same tool with the same arguments more often than its `repeat` declaration allows
                (`governance.repeat_limits`); the extra call is not run. Identical calls are counted over
                the whole run — a state change in between resets nothing — except for tools declaring
                `repeat = "reads"` (read-only: an MCP tool marked readOnlyHint), whose count starts
                again after any call that may change state (checkpoints' `may_change`): after a write,
                the same read may answer differently, so status / add / status / status is no loop
- `steps`       model turns per unit (`max_steps`): the last allowed turn is the reserve turn
- `stall`       a tool went silent and the watchdog cut it off
- `tokens`, `cost`  budgets: land when the next turn would not fit (spent + last turn >= budget)

Counting happens here, outside the tool chain and any cache behind it: a repeat served from a cache
still reaches `after_tool` and still counts (invariant 7).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arreio.engine.checkpoints.plan import may_change
from arreio.engine.core import events as ev
from arreio.engine.core.wording import counted
from arreio.engine.loop.hooks import Deny, Land, RunHook, Turn
from arreio.engine.providers import registry
from arreio.engine.providers.pricing import estimate_cost, run_cost
from arreio.engine.walls.audit import canonical
from arreio.engine.walls.settings import DEFAULT_REPEAT_LIMITS, GovernanceSettings

if TYPE_CHECKING:
    from arreio.engine.core.messages import ToolCallPart
    from arreio.engine.core.model_io import ModelRequest, Usage
    from arreio.engine.tools.base import ToolResult

LAND_INSTRUCTION = (
    "The run has reached a limit ({what}). Tools are no longer available. Finish now with what you have: "
    "say what is done, what is not, and what you would do next."
)


@dataclass
class Hit:
    kind: str
    limit: float
    value: float
    what: str  # plain words: "120 tool calls"


class CeilingsHook(RunHook):
    name = "ceilings"

    def __init__(self, settings: GovernanceSettings, *, partial_path: str, session_id: str) -> None:
        self.settings = settings
        self.partial_path = partial_path
        self.session_id = session_id
        self.repeats: dict[tuple[str, str], int] = {}
        self._reads: set[tuple[str, str]] = set()  # keys of `reads` tools: a state change clears them
        self.denied: set[str] = set()  # calls this hook refused (they did not run, so they do not count)
        self.hit: Hit | None = None
        self.warnings: list[str] = []
        self.stalls: list[Any] = []  # the watchdog's cuts so far (for the report)
        # Per runner (keyed by agent): sub-agents run these same hooks, and a child's step ceiling
        # must not land its parent (or the parent's reserve turn is lost).
        self._steps_hit: dict[str, Hit] = {}
        self._stalls_seen = 0
        self._last_turn_tokens = 0
        self._last_turn_cost = 0.0
        self._cost_known = True

    def at_unit_start(self, turn: Turn) -> list[ev.Event]:
        """A unit began: its step ceiling counts from here (the limit is per unit and may be the
        unit's own `max_steps`: `turn.unit_limit`)."""
        self._steps_hit.pop(turn.agent, None)
        return []

    # -- before each model call: land when a ceiling is reached --------------------------------
    async def before_model(self, turn: Turn, request: ModelRequest) -> Land | None:
        hit = self.hit or self._steps_hit.get(turn.agent) or self._check(turn)
        if hit is None:
            return None
        if hit.kind == "steps":  # one runner's own limit (a sub-agent's does not land its parent)
            self._steps_hit[turn.agent] = hit
        else:  # the run's shared budgets: every runner lands
            self.hit = hit
        message = self._message(hit)
        return Land(hit.kind, hit.limit, hit.value, message, LAND_INSTRUCTION.format(what=hit.what))

    def _check(self, turn: Turn) -> Hit | None:
        s = self.settings
        stalls = turn.stalls
        tool_stalls = [x for x in stalls[self._stalls_seen :] if x.what != "model"]
        self._stalls_seen = len(stalls)
        if tool_stalls:
            stall = tool_stalls[0]
            return Hit("stall", stall.seconds, stall.seconds, f"{stall.what} gave no signal for {stall.seconds:g} s")
        calls = turn.totals.tool_calls
        if calls >= s.max_tool_calls:
            return Hit("tool_calls", s.max_tool_calls, calls, f"{calls} tool calls")
        limit, unit_steps = turn.unit_limit, turn.unit_steps
        if limit >= 2 and unit_steps >= limit - 1:
            return Hit("steps", limit, unit_steps + 1, f"{counted(unit_steps + 1, 'model turn')} (max_steps {limit})")
        total = turn.totals.usage.input_tokens + turn.totals.usage.output_tokens
        if s.max_total_tokens is not None and total and total + self._last_turn_tokens >= s.max_total_tokens:
            return Hit("tokens", s.max_total_tokens, total, f"{total:,} tokens of a {s.max_total_tokens:,} budget")
        if s.max_cost_usd is not None:
            cost = _cost(turn)
            if cost is not None and cost and cost + self._last_turn_cost >= s.max_cost_usd:
                return Hit("cost", s.max_cost_usd, round(cost, 6), f"${cost:.4f} of a ${s.max_cost_usd:g} budget")
        return None

    def _message(self, hit: Hit) -> str:
        where = f"the partial report is in {self.partial_path}"
        if hit.kind == "steps":
            return (
                f"stopped after {hit.what}; {where} — continue with "
                f"`arreio run --resume {self.session_id} --max-steps N`"
            )
        prefix = "stopped: " if hit.kind == "stall" else "stopped after "
        # The run's budgets are per run: a resumed run counts afresh (its setting raises it for good).
        setting = {
            "tool_calls": " (governance.max_tool_calls raises the limit)",
            "tokens": " (governance.max_total_tokens raises the budget)",
            "cost": " (governance.max_cost_usd raises the budget)",
        }.get(hit.kind, "")
        return f"{prefix}{hit.what}; {where} — continue with `arreio run --resume {self.session_id}`{setting}"

    # -- usage: budgets --------------------------------------------------------------------------
    def after_model(self, turn: Turn, usage: Usage) -> list[ev.Event]:
        self._last_turn_tokens = usage.input_tokens + usage.output_tokens
        self.stalls = list(turn.stalls)
        if self.settings.max_cost_usd is None:
            return []
        cost = estimate_cost(turn.model, usage)
        if cost is None and self._cost_known and not _is_offline(turn.model):
            self._cost_known = False
            message = (
                f"governance.max_cost_usd is set but the price of {turn.model} is unknown; "
                "the cost budget is not enforced"
            )
            self.warnings.append(message)
            return [ev.Warning_(message=message, code="cost_unknown")]
        self._last_turn_cost = cost or 0.0
        return []

    # -- tool calls: ceiling and repetition -------------------------------------------------------
    async def before_tool(self, turn: Turn, call: ToolCallPart) -> Deny | None:
        s = self.settings
        calls = turn.totals.tool_calls
        if calls >= s.max_tool_calls:
            self.hit = self.hit or Hit("tool_calls", s.max_tool_calls, calls, f"{calls} tool calls")
            self.denied.add(call.id)
            return Deny(f"not run: the run reached its ceiling of {s.max_tool_calls} tool calls")
        key, limit = self._key(turn, call)
        done = self.repeats.get(key, 0)
        if done >= limit:
            self.hit = self.hit or Hit(
                "repetition", limit, done + 1, f"{call.name} called {done + 1} times with the same arguments"
            )
            self.denied.add(call.id)
            return Deny(
                f"not run: {call.name} already ran {done} time(s) with exactly these arguments "
                f"(allowed: {limit}); use the earlier result or change the approach"
            )
        return None

    def after_tool(self, turn: Turn, call: ToolCallPart, result: ToolResult) -> list[ev.Event]:
        if call.id not in self.denied:
            key, _ = self._key(turn, call)
            tool = turn.tools.get(call.name)
            if may_change(call.name, read_only=getattr(tool, "read_only", False) is True):
                for read in self._reads:  # what the reads answered may have changed
                    self.repeats.pop(read, None)
                self._reads.clear()
            elif getattr(tool, "repeat", "few") == "reads":
                self._reads.add(key)
            self.repeats[key] = self.repeats.get(key, 0) + 1
        return []

    def _key(self, turn: Turn, call: ToolCallPart) -> tuple[tuple[str, str], int]:
        tool = turn.tools.get(call.name)
        repeat = getattr(tool, "repeat", "few")
        limits = self.settings.repeat_limits
        return (call.name, canonical(call.arguments)), limits.get(repeat, DEFAULT_REPEAT_LIMITS["few"])


def _is_offline(model: str) -> bool:
    return registry.is_offline(model)


def _cost(turn: Turn) -> float | None:
    if _is_offline(turn.model):
        return 0.0
    return run_cost(turn.model, turn.totals.usage, getattr(turn.totals, "by_model", None))

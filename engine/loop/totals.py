"""The run's counters: one object the pipeline, every runner (sub-agents included) and the ceilings
share, so who counts stays outside who answers (docs/architecture.md invariant 7)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from arreio.engine.core.model_io import Usage


@dataclass(frozen=True)
class Spent:
    """A model call a hook made (a compaction's summary), for the run's counters: a hook returns it
    among its events, and the runner counts it (`Totals.told`) instead of yielding it. `model`: the
    model that served it, counted in the costs by model (None: counted in the run's usage only)."""

    usage: Usage
    model: str | None = None


@dataclass
class Totals:
    """Usage, tool calls and retries count the whole run, sub-agents included; model turns are
    counted per agent ("" is the run's own runner), since each runner has its own step limit."""

    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    tools_used: dict[str, int] = field(default_factory=dict)
    retries: int = 0
    turns: dict[str, int] = field(default_factory=dict)
    by_model: dict[str, Usage] = field(default_factory=dict)  # the same usage, split by the model that served it
    switches: list[dict[str, str]] = field(default_factory=list)  # fallback switches: {from, to, reason}

    def add_usage(self, usage: Usage, model: str | None = None) -> None:
        self.usage = self.usage + usage
        if model is not None:
            self.by_model[model] = self.by_model.get(model, Usage()) + usage

    def record_call(
        self, spent: Usage | None, model: str, *, retried: bool = False, switched: dict[str, str] | None = None
    ) -> None:
        """What a model call reported (engine/loop/model_call.py's `CallState`): an attempt's usage,
        a retry, a switch to a fallback model."""
        if spent is not None:
            self.add_usage(spent, model)
        if retried:
            self.retries += 1
        if switched is not None:
            self.switches.append(switched)

    def told(self, events: Iterable[Any]) -> Iterator[Any]:
        """What hooks returned, to yield: a `Spent` among it is counted here, never yielded."""
        for event in events:
            if isinstance(event, Spent):
                self.add_usage(event.usage, event.model)
            else:
                yield event

    def count_call(self, name: str) -> None:
        self.tool_calls += 1
        self.tools_used[name] = self.tools_used.get(name, 0) + 1

    def count_turn(self, agent: str) -> None:
        self.turns[agent] = self.turns.get(agent, 0) + 1

    def steps(self, agent: str = "") -> int:
        """Model turns `agent` took in this run (the run's own by default)."""
        return self.turns.get(agent, 0)

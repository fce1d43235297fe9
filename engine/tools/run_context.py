"""The run's context: one object every feature, hook and tool sees (docs/architecture.md sections 1 and 6).

It is complete before any feature's `tools()` runs — the session and run ids are chosen first — so
nothing is patched in afterwards. The runner hands each tool call a copy (`for_call`) that adds what
only that call has: the step number, the stream for events a long tool emits, and the agent running
it, seen through the `Agent` port (the sub-agent tool spawns its child through it; a tool never
reaches into the loop further than that).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from arreio.engine.core.config import Settings
from arreio.engine.core.paths import state_dir as default_state_dir
from arreio.engine.core.ports import Clock, SystemClock
from arreio.engine.providers.registry import ProviderFactory, make_provider
from arreio.engine.walls.redact import Redactor

if TYPE_CHECKING:
    from arreio.engine.core.ports import Provider
    from arreio.engine.session.file import Session
    from arreio.engine.tools.registry import ToolRegistry

Section = TypeVar("Section")


class SubAgent(Protocol):
    """A sub-agent started by `Agent.spawn`: its stream of events ends in its own `unit_end`."""

    def run(
        self, user_text: str | None, *, unit_id: str = "main", max_steps: int | None = None
    ) -> AsyncIterator[Any]: ...


class Agent(Protocol):
    """The agent running a tool call, as a tool may see it (the loop's runner implements it): what it
    runs with, the run's shared counters (`totals`: tool calls, tools used, usage), and `spawn`, which
    starts a sub-agent with the same hooks, clock, settings and counters but its own session and tools."""

    model: str
    provider: Provider
    tools: ToolRegistry
    session: Session
    totals: Any

    def spawn(
        self, *, provider: Provider, model: str, session: Session, tools: ToolRegistry, agent: str
    ) -> SubAgent: ...


@dataclass
class RunContext:
    """What the run is and where it happens. `cwd` is the working directory: file tools stay inside
    it. `redactor` is the run's one redactor; every writer uses it. `provider_factory` is the run's
    one source of providers (already wrapped for `--record`/`--replay`)."""

    cwd: Path
    settings: Settings = field(default_factory=Settings)
    clock: Clock = field(default_factory=SystemClock)
    env: Mapping[str, str] = field(default_factory=dict)
    state_dir: Path | None = None  # None: `.arreio/` in `cwd`, or `$ARREIO_HOME`
    redactor: Redactor | None = None  # None: built from `env`
    provider_factory: ProviderFactory = make_provider
    session_id: str = ""
    session_path: Path | None = None
    run_id: str = ""
    approve_all: bool = False  # `--yes`: approve sensitive actions for this run
    # Asks a person about a sensitive call (an interactive terminal); None when nobody can answer.
    ask: Callable[[Any], bool] | None = None
    # -- one tool call's own (set by `for_call`) --
    turn: int = 0  # the runner's step number; tools that cap failures "per turn" key on it
    emit: Callable[[Any], None] | None = None  # streams events out of a long tool (a sub-agent's own)
    runner: Agent | None = None  # the agent running this call (the runner)
    _sections: dict[Any, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.cwd = Path(self.cwd).resolve()
        if self.state_dir is None:
            self.state_dir = default_state_dir(self.cwd, self.env)
        if self.redactor is None:
            self.redactor = Redactor.from_env(self.env)

    def section(self, parse: Callable[[Settings], Section]) -> Section:
        """A feature's config section, parsed once per run: `parse` is a module-level function of
        the settings (the cache is keyed on it), so check(), tools() and hooks() share one result."""
        if parse not in self._sections:
            self._sections[parse] = parse(self.settings)
        return self._sections[parse]

    def per_run(self, key: Any, make: Callable[[], Section]) -> Section:
        """An object made once per run and shared by every call of it (sub-agents included), e.g. the
        run's sandbox: `make()` on first use, keyed by `key`."""
        if key not in self._sections:
            self._sections[key] = make()
        return self._sections[key]

    def for_call(self, **changes: Any) -> RunContext:
        """A copy for one tool call — `turn`, `emit`, `runner` — sharing the parsed sections and
        everything else (a shallow copy: this context is complete already, so `__post_init__` does
        not run again)."""
        unknown = set(changes) - _CALL_FIELDS
        if unknown:
            raise TypeError(f"for_call sets only {sorted(_CALL_FIELDS)}, not {sorted(unknown)}")
        clone = copy.copy(self)
        for name, value in changes.items():
            setattr(clone, name, value)
        return clone

    def for_session(self, session_id: str, session_path: Path | None) -> RunContext:
        """A copy for another session of the same run (a sub-agent's)."""
        return dataclasses.replace(self, session_id=session_id, session_path=session_path, _sections=self._sections)


_CALL_FIELDS = frozenset({"turn", "emit", "runner"})

"""A feature plugs a layer above the engine (memory, skills, knowledge) into every run.

The engine never imports those layers (DESIGN.md section 1). Each layer ships a `Feature` subclass next
to its code (`memory/feature.py`, ...), and the composition root (`cli/deps.py`) hands the pipeline a
list of them. The pipeline calls the hooks at fixed points of the conveyor, for every entry point.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arreio.engine.ports import Clock, SystemPromptBlockSource

if TYPE_CHECKING:
    from arreio.engine.config import Settings
    from arreio.engine.conveyor.report import RunReport
    from arreio.engine.hooks import RunHook
    from arreio.engine.tools.base import Tool


@dataclass
class RunContext:
    """What a feature may know about the run being assembled."""

    cwd: Path
    state_dir: Path
    settings: Settings
    clock: Clock
    env: Mapping[str, str]
    session_id: str = ""
    session_path: Path | None = None
    run_id: str = ""
    approve_all: bool = False  # `--yes`: approve sensitive actions for this run
    # Asks a person about a sensitive call (an interactive terminal); None when nobody can answer.
    ask: Callable[[Any], bool] | None = None


class Feature:
    """Override what you need; every hook defaults to doing nothing. Hooks must not raise for
    ordinary conditions: a feature that cannot work returns nothing and says why in a warning."""

    name = "feature"

    def check(self, settings: Settings) -> None:
        """Validate this feature's config section before anything is created (a `ConfigError` then
        fails the run cleanly, leaving no empty session behind)."""

    def tools(self, ctx: RunContext) -> list[Tool]:
        """Tools this feature offers in this run (only those whose prerequisite holds)."""
        return []

    def prompt_blocks(self, ctx: RunContext) -> list[SystemPromptBlockSource]:
        """System prompt blocks for a NEW session (a resumed one keeps its frozen prompt)."""
        return []

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        """Turn-loop hooks for this run (governance, compaction, ...), asked in feature order."""
        return []

    def on_event(self, ctx: RunContext, event: Any) -> None:
        """Sees every event the run emits, in order (journals, metrics). Must be cheap; may not raise."""

    def after_run(self, ctx: RunContext, report: RunReport) -> None:
        """Called once the run's report is final, before it is written. Failures become warnings."""

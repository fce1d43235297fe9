"""Project instructions in a run: the accepted AGENTS.md / CLAUDE.md files enter a new session's
prompt as a stable block, before the volatile ones (so the prefix cache holds); the session's header
keeps their names (the run's first line and `arreio sessions show` say them); a file that is new or
changed since the user accepted it is left out, with one warning naming it (memory/instructions.py)."""

from __future__ import annotations

from typing import Any

from arreio.engine.core import events as ev
from arreio.engine.core.ports import SystemPromptBlockSource
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import RunHook
from arreio.engine.tools.run_context import RunContext
from arreio.memory.instructions import instructions_settings, notice, render, survey

CAP_CHARS = 32_000  # as Codex reads AGENTS.md: a project's conventions may run longer than a memory block


class InstructionsBlock:
    """The prompt block of the obeyed files; `instruction_files` names them for the session's header."""

    name = "instructions"
    stable = True
    cap = CAP_CHARS

    def __init__(self, text: str, files: list[str], notices: list[str]) -> None:
        self.text, self.instruction_files, self.notices = text, files, notices

    def render(self) -> str | None:
        return self.text or None


class _Notices(RunHook):
    """Says, when the run starts, which instruction files it does not obey and why."""

    name = "instruction-notices"

    def __init__(self, notices: list[str]) -> None:
        self.notices = notices

    def at_unit_start(self, turn: Any) -> list[ev.Event]:
        out, self.notices = self.notices, []
        return [ev.Warning_(message=n, code="instructions") for n in out]


class InstructionsFeature(Feature):
    name = "instructions"

    def check(self, ctx: RunContext) -> None:
        ctx.section(instructions_settings)

    def prompt_blocks(self, ctx: RunContext) -> list[SystemPromptBlockSource]:
        settings = ctx.section(instructions_settings)
        assert ctx.state_dir is not None
        files = survey(ctx.cwd, ctx.state_dir, settings)
        block = InstructionsBlock(
            render(files), [f.shown for f in files if f.obeyed], [notice(f) for f in files if not f.obeyed]
        )
        ctx.per_run(_NOTICES, lambda: block.notices)
        return [block]

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        notices = ctx.per_run(_NOTICES, list)
        return [_Notices(notices)] if notices else []


_NOTICES = "instruction-notices"

"""Skills in a run: the skills index block (new sessions) and the `skill_view` / `skill_manage` tools.

The curator itself does not run here: it runs on demand (`arreio curator run`), so a run never
changes which skills exist while the agent is using them.
"""

from __future__ import annotations

from typing import Any

from arreio.curator.index_block import SkillsIndexBlock
from arreio.curator.skills import skills_root
from arreio.curator.tools import skill_tools
from arreio.engine.core import events as ev
from arreio.engine.core.events import Warning_
from arreio.engine.core.ports import SystemPromptBlockSource
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import RunHook
from arreio.engine.tools.base import Tool
from arreio.engine.tools.run_context import RunContext


class _IndexNotices(RunHook):
    """Says once, when the run starts, which skills the index left out and why."""

    name = "skills-notices"

    def __init__(self, block: SkillsIndexBlock) -> None:
        self.block = block

    def at_unit_start(self, turn: Any) -> list[ev.Event]:
        notices, self.block.notices = list(self.block.notices), []
        return [Warning_(message=n, code="skills") for n in notices]


class SkillsFeature(Feature):
    name = "skills"

    def __init__(self) -> None:
        self._block: SkillsIndexBlock | None = None  # a started run's prompt block, for its notices

    def start(self, ctx: RunContext) -> SkillsFeature:
        return SkillsFeature()

    def tools(self, ctx: RunContext) -> list[Tool]:

        return skill_tools(ctx.state_dir, ctx.clock)

    def prompt_blocks(self, ctx: RunContext) -> list[SystemPromptBlockSource]:

        self._block = SkillsIndexBlock(skills_root(ctx.state_dir))
        return [self._block]

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        block, self._block = self._block, None
        return [_IndexNotices(block)] if block is not None else []

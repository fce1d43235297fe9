"""Skills in a run: the skills index block (new sessions) and the `skill_view` / `skill_manage` tools.

The curator itself does not run here: it runs on demand (`arreio curator run`), so a run never
changes which skills exist while the agent is using them.
"""

from __future__ import annotations

from arreio.curator.index_block import SkillsIndexBlock
from arreio.curator.skills import skills_root
from arreio.curator.tools import skill_tools
from arreio.engine.feature import Feature
from arreio.engine.ports import SystemPromptBlockSource
from arreio.engine.run_context import RunContext
from arreio.engine.tools.base import Tool


class SkillsFeature(Feature):
    name = "skills"

    def tools(self, ctx: RunContext) -> list[Tool]:

        return skill_tools(ctx.state_dir, ctx.clock)

    def prompt_blocks(self, ctx: RunContext) -> list[SystemPromptBlockSource]:

        return [SkillsIndexBlock(skills_root(ctx.state_dir))]

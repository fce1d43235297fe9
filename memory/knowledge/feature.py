"""The knowledge base in a run: the `kb_search` tool, offered only when there are documents."""

from __future__ import annotations

from arreio.engine.feature import Feature, RunContext
from arreio.engine.tools.base import Tool


class KnowledgeFeature(Feature):
    name = "knowledge"

    def tools(self, ctx: RunContext) -> list[Tool]:
        from arreio.memory.knowledge.tool import kb_tools

        return kb_tools(ctx.state_dir)

"""The knowledge base in a run: the `kb_search` tool, offered only when there are documents."""

from __future__ import annotations

from arreio.engine.loop.feature import Feature
from arreio.engine.tools.base import Tool
from arreio.engine.tools.run_context import RunContext
from arreio.memory.knowledge.settings import knowledge_settings
from arreio.memory.knowledge.tool import kb_tools


class KnowledgeFeature(Feature):
    name = "knowledge"

    def check(self, ctx: RunContext) -> None:
        from arreio.memory.knowledge.embedders import check_choice

        ctx.section(knowledge_settings)
        check_choice()  # a bad ARREIO_KB_EMBEDDER fails the run before it starts, not in kb_search

    def tools(self, ctx: RunContext) -> list[Tool]:

        return kb_tools(ctx.state_dir, ctx.section(knowledge_settings))

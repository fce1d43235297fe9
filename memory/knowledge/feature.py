"""The knowledge base in a run: the `kb_search` tool, offered only when there are documents.

Every run asks; few have a knowledge base. So the settings (and the fusion and relevance modules
their defaults come from) load when a `knowledge:` section is written or there are documents, and
the tool when there are documents: a run without either imports none of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arreio.engine.loop.feature import Feature
from arreio.engine.tools.run_context import RunContext
from arreio.memory.knowledge.database_file import has_documents

if TYPE_CHECKING:
    from arreio.engine.tools.base import Tool


class KnowledgeFeature(Feature):
    name = "knowledge"

    def check(self, ctx: RunContext) -> None:
        from arreio.memory.knowledge.embedders import check_choice

        if ctx.settings.knowledge:  # an absent section is the defaults: nothing to check
            from arreio.memory.knowledge.settings import knowledge_settings

            ctx.section(knowledge_settings)
        check_choice()  # a bad ARREIO_KB_EMBEDDER fails the run before it starts, not in kb_search

    def tools(self, ctx: RunContext) -> list[Tool]:
        if not has_documents(ctx.state_dir):
            return []
        from arreio.memory.knowledge.settings import knowledge_settings
        from arreio.memory.knowledge.tool import KbSearchTool

        return [KbSearchTool(ctx.state_dir, settings=ctx.section(knowledge_settings))]

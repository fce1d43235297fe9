"""The knowledge base in a run: the `kb_search` tool, offered only when there are documents."""

from __future__ import annotations

from typing import Any

from arreio.engine.feature import Feature, RunContext
from arreio.engine.tools.base import Tool


class KnowledgeFeature(Feature):
    name = "knowledge"

    def check(self, settings: Any) -> None:
        from arreio.memory.knowledge.embedders import check_choice
        from arreio.memory.knowledge.settings import parse_knowledge

        parse_knowledge(settings.knowledge)
        check_choice()  # a bad ARREIO_KB_EMBEDDER fails the run before it starts, not in kb_search

    def tools(self, ctx: RunContext) -> list[Tool]:
        from arreio.memory.knowledge.settings import parse_knowledge
        from arreio.memory.knowledge.tool import kb_tools

        return kb_tools(ctx.state_dir, parse_knowledge(ctx.settings.knowledge))

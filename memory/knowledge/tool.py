"""The `kb_search` tool: the agent looks things up in the user's knowledge base.

Offered only when the knowledge base has documents (`kb_tools` returns [] otherwise), so a run
without one never sees the tool. Read-only; searching never writes or embeds documents.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from arreio.engine.tools.base import Tool, ToolError, ToolResult
from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.workspace import shown_name
from arreio.memory.knowledge.database_file import has_documents
from arreio.memory.knowledge.settings import KnowledgeSettings
from arreio.memory.knowledge.snippet import around_match

if TYPE_CHECKING:  # the index (SQLite, FTS5, fusion) loads with the first search, not with every run
    from arreio.memory.knowledge.index import KnowledgeBase

SNIPPET_CHARS = 1200  # per hit: enough to answer from, small enough for ten hits in context


class KbSearchInput(BaseModel):
    query: str = Field(description="What to look for, in natural language or keywords, in any language.")
    k: int = Field(default=5, ge=1, le=20, description="How many passages to return (1-20).")


def _display(path: str, root: Path) -> str:
    try:
        return shown_name(str(Path(path).relative_to(root.resolve())))
    except ValueError:
        return shown_name(path)


class KbSearchTool(Tool):
    name = "kb_search"
    description = (
        "Search the user's knowledge base (their indexed documents and notes) by meaning and by "
        "keywords. Returns the best passages, each with path:start-end lines and a score in 0..1 "
        "saying how well it matches (0.9 and up: strong; passages below the floor are not returned, "
        "so an empty answer means nothing indexed matches). Use it when the answer may be in the "
        "user's own material."
    )
    input_model = KbSearchInput
    sensitive = False
    repeat = "few"
    read_only = True
    timeout_s = 30.0

    def __init__(self, state_dir: Path, open_kb: Any = None, settings: KnowledgeSettings | None = None) -> None:
        self._state_dir = state_dir
        self._settings = settings
        self._open_kb = open_kb
        self._kb: KnowledgeBase | None = None
        self._lock = threading.Lock()  # one search at a time on the shared connection

    def _knowledge_base(self) -> KnowledgeBase:
        if self._kb is None:
            if self._open_kb is not None:
                self._kb = self._open_kb()
            else:
                from arreio.memory.knowledge.index import open_knowledge_base

                self._kb = open_knowledge_base(self._state_dir, settings=self._settings)
        return self._kb

    def _search(self, query: str, k: int) -> tuple[list, str | None, float]:
        with self._lock:
            kb = self._knowledge_base()
            return kb.search(query, k=k), kb.notice(), kb.fusion.min_score

    async def execute(self, args: KbSearchInput, ctx: RunContext) -> ToolResult:
        if not args.query.strip():
            raise ToolError("query is empty: say what to look for")
        try:
            hits, notice, floor = await asyncio.to_thread(self._search, args.query, args.k)
        except sqlite3.Error as error:
            raise ToolError(f"knowledge base unavailable: {error}", transient=True) from error
        # the model should know when matching was by keyword only (it may rephrase with the words)
        note = f"(note: {notice})\n\n" if notice else ""
        if not hits:
            well = f" well enough (no passage scores {floor:.2f} or more)" if floor > 0 else ""
            return ToolResult(f"{note}No passages in the knowledge base match {args.query!r}{well}.")
        blocks = []
        for number, hit in enumerate(hits, start=1):
            text = around_match(hit.text, args.query, SNIPPET_CHARS)
            where = f"{_display(hit.path, ctx.cwd)}:{hit.start_line}-{hit.end_line}"
            blocks.append(f"[{number}] {where} (score {hit.score:.2f})\n{text}")
        return ToolResult(note + "\n\n".join(blocks))

    def close(self) -> None:
        if self._kb is not None:
            self._kb.close()
            self._kb = None


def kb_tools(state_dir: Path, settings: KnowledgeSettings | None = None) -> list[Tool]:
    """The knowledge-base tools for a run: `[KbSearchTool]` when there is something to search, else []."""
    return [KbSearchTool(state_dir, settings=settings)] if has_documents(state_dir) else []

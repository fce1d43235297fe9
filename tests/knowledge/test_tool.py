"""The `kb_search` tool: offered only when there is something to search; works in an offline run."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from arreio.engine.providers.testing import ScriptedProvider
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext
from arreio.memory.knowledge.index import DB_NAME, KnowledgeBase
from arreio.memory.knowledge.sqlite_backend import SqliteBackend
from arreio.memory.knowledge.tool import KbSearchTool, kb_tools
from tests.conftest import drain, make_runner, unit_end
from tests.knowledge.conftest import CountingEmbedder


def _build(state: Path, docs: Path) -> None:
    kb = KnowledgeBase(SqliteBackend(state / DB_NAME), CountingEmbedder())
    kb.add(["."], docs)
    kb.close()


def _tool(state: Path) -> KbSearchTool:
    # The hashing embedder stands in for the real model, which tests never need.
    return KbSearchTool(state, open_kb=lambda: KnowledgeBase(SqliteBackend(state / DB_NAME), CountingEmbedder()))


def test_no_tool_without_documents_and_nothing_created(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert kb_tools(state) == []
    assert not state.exists()  # looking did not create the database
    SqliteBackend(state / DB_NAME).close()  # an empty knowledge base
    assert kb_tools(state) == []


def test_tool_offered_when_documents_exist(tmp_path: Path, docs: Path) -> None:
    state = tmp_path / "state"
    _build(state, docs)
    tools = kb_tools(state)
    assert [t.name for t in tools] == ["kb_search"]
    schema = tools[0].input_schema()
    assert schema["required"] == ["query"] and "k" in schema["properties"]


def test_kb_search_through_the_tool_chain(tmp_path: Path, docs: Path) -> None:
    state = tmp_path / "state"
    _build(state, docs)
    registry = ToolRegistry([_tool(state)])
    ctx = RunContext(cwd=docs)
    result = asyncio.run(run_tool(registry, "kb_search", {"query": "向量检索", "k": 2}, ctx))
    assert not result.is_error
    assert result.content.startswith("[1] notes/chinese.md:")  # path relative to the working root
    assert "(score " in result.content and "余弦相似度" in result.content
    empty = asyncio.run(run_tool(registry, "kb_search", {"query": "zzzqqq"}, ctx))
    assert not empty.is_error  # a hashing vector pass still returns neighbours; no crash either way
    bad = asyncio.run(run_tool(registry, "kb_search", {"query": "x", "k": 99}, ctx))
    assert bad.is_error and "k" in bad.content
    blank = asyncio.run(run_tool(registry, "kb_search", {"query": "  "}, ctx))
    assert blank.is_error and "empty" in blank.content


def test_kb_search_in_an_offline_run(tmp_path: Path, docs: Path) -> None:
    state = tmp_path / "state"
    _build(state, docs)
    provider = ScriptedProvider(
        [
            {"tool_calls": [{"name": "kb_search", "arguments": {"query": "compost brown material", "k": 3}}]},
            {"text": "Equal volumes of green and brown material."},
        ]
    )
    runner = make_runner(tmp_path, provider, extra_tools=[_tool(state)])
    events = asyncio.run(drain(runner, "How do I compost?"))
    assert unit_end(events).verdict == "success"
    assert any(e.type == "tool_end" for e in events)
    assert "kb_search" in [spec.name for spec in provider.requests[0].tools]
    result = provider.requests[1].messages[-1].tool_result_part
    assert not result.is_error
    first = result.content.splitlines()[0]
    assert "gardening.md:" in first and re.search(r"\(score (0\.\d\d|1\.00)\)$", first)
    assert "brown" in result.content


def test_knowledge_feature_offers_the_tool_only_with_documents(tmp_path: Path, docs: Path) -> None:
    from arreio.engine.core.config import Settings
    from arreio.engine.providers.testing import FixedClock
    from arreio.engine.tools.run_context import RunContext
    from arreio.memory.knowledge.feature import KnowledgeFeature

    state = tmp_path / "state"
    ctx = RunContext(cwd=docs, state_dir=state, settings=Settings(), clock=FixedClock(), env={})
    assert KnowledgeFeature().tools(ctx) == []
    _build(state, docs)
    assert [t.name for t in KnowledgeFeature().tools(ctx)] == ["kb_search"]


def test_kb_search_tells_the_model_when_it_matched_by_keyword_only(tmp_path: Path, docs: Path) -> None:
    state = tmp_path / "state"
    _build(state, docs)  # vectors made by the hashing embedder …
    keyword_only = KbSearchTool(state, open_kb=lambda: KnowledgeBase(SqliteBackend(state / DB_NAME), None))
    result = asyncio.run(
        run_tool(ToolRegistry([keyword_only]), "kb_search", {"query": "向量检索"}, RunContext(cwd=docs))
    )
    assert result.content.startswith("(note: ") and "keyword search only" in result.content  # … but none now
    assert "[1] notes/chinese.md:" in result.content

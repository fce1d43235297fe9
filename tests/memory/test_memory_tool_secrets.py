"""The memory tool never stores a secret from the run's environment."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arreio.engine.tools.base import ToolContext
from arreio.memory.store import MemoryStores
from arreio.memory.tool import MemoryTool


def test_content_with_an_environment_secret_is_refused(tmp_path: Path) -> None:
    stores = MemoryStores(tmp_path)
    tool = MemoryTool(stores)
    ctx = ToolContext(root=tmp_path, env={"DEPLOY_API_KEY": "k9-very-secret-value-123"}, session_id="s", turn=1)
    result = asyncio.run(tool.execute({"target": "memory", "action": "add",
                                       "content": "Deploy with key k9-very-secret-value-123"}, ctx))
    assert result.is_error and "$DEPLOY_API_KEY" in result.content
    assert stores.memory.entries() == []
    ok = asyncio.run(tool.execute({"target": "memory", "action": "add", "content": "Deploys go through CI."}, ctx))
    assert not ok.is_error and stores.memory.entries() == ["Deploys go through CI."]


def test_an_entry_larger_than_the_whole_store_says_so(tmp_path: Path) -> None:
    from arreio.memory.store import MemoryLimits

    tool = MemoryTool(MemoryStores(tmp_path, MemoryLimits(memory_chars=100)))
    ctx = ToolContext(root=tmp_path, session_id="s", turn=1)
    result = asyncio.run(tool.execute({"target": "memory", "action": "add", "content": "x" * 300}, ctx))
    assert result.is_error and "300 chars, more than MEMORY.md's whole limit of 100" in result.content
    assert "is full" not in result.content

"""Fixtures for the tool tests: a working directory, a context on it, and a way to call a tool
through the real protection chain with the real built-ins (no fakes needed for files/processes)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arreio.engine.tools.base import ToolResult
from arreio.engine.tools.builtin import builtin_tools
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext


@pytest.fixture
def root(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def ctx(root: Path) -> RunContext:
    return RunContext(cwd=root, env={"PATH": "/usr/bin:/bin"})


@pytest.fixture
def call(ctx: RunContext) -> Callable[..., ToolResult]:
    """call("read_file", path="a.txt") → the ToolResult the model would see."""
    registry = ToolRegistry(builtin_tools())

    def _call(name: str, _ctx: RunContext | None = None, **arguments: Any) -> ToolResult:
        return asyncio.run(run_tool(registry, name, arguments, _ctx or ctx))

    return _call

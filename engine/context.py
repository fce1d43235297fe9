"""Prompt assembly from conditional blocks: stable blocks first, volatile ones last, so the provider's
prefix cache holds across turns and sessions (DESIGN.md section 2, "assembly").

Blocks come from the engine (identity, tool guidance, environment) and from ports the composition root
fills (memory snapshot, skills index, ...). A block that renders to nothing is left out; each has a cap.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from arreio.engine.ports import SystemPromptBlockSource
from arreio.engine.providers.base import SystemBlock

BLOCK_CAP_CHARS = 12_000

IDENTITY = """You are arreio, an agent working in the user's terminal on the goal they gave you.
Work step by step with the tools you have. Read before you change; keep changes small and verifiable.
When the goal is done, answer with a short, factual account of what you did and where the results are.
Only claim what you actually did: the harness checks files and commands you say you produced."""

TOOL_GUIDANCE = """Tools:
- Paths are relative to the working directory; you cannot reach outside it.
- Prefer read_file/list_dir/grep over shell for looking around; use edit_file for small changes.
- A tool error is information: read it, adjust, and do not repeat the same failing call."""


def cap(text: str, limit: int = BLOCK_CAP_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… block cut at {limit} of {len(text)} chars]"


def environment_block(cwd: Path, now: datetime) -> SystemBlock:
    text = (
        f"Environment:\n- Working directory: {cwd}\n- Platform: {platform.system()} {platform.machine()}\n"
        f"- Date: {now.strftime('%Y-%m-%d')} (UTC)"
    )
    return SystemBlock(name="environment", text=text, stable=False)


def assemble_system(
    *, cwd: Path, now: datetime, sources: Iterable[SystemPromptBlockSource] = (), tool_names: Iterable[str] = ()
) -> list[SystemBlock]:
    """The system prompt for a new session: identity, tool guidance (when tools exist), the ports' blocks
    (stable ones first), then the volatile environment block."""
    blocks = [SystemBlock(name="identity", text=IDENTITY)]
    if list(tool_names):
        blocks.append(SystemBlock(name="tools", text=TOOL_GUIDANCE))
    rendered = []
    for source in sources:
        text = source.render()
        if text and text.strip():
            rendered.append(SystemBlock(name=source.name, text=cap(text.strip()), stable=source.stable))
    blocks += [b for b in rendered if b.stable] + [b for b in rendered if not b.stable]
    blocks.append(environment_block(cwd, now))
    return blocks

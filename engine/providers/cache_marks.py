"""Prompt-cache breakpoints for Claude models reached through litellm (Bedrock, Vertex, Anthropic).

The direct Anthropic adapter marks its own wire format (anthropic.py). Through litellm the request is
in Chat Completions shape, and litellm carries a `cache_control` on a content block or a tool over to
Claude. Marked, as the direct adapter does: the stable system prompt, the last tool, and the last
message before the newest turn — everything up to it is the prefix the next call shares. Only Claude
models get marks (other models ignore or refuse them).
"""

from __future__ import annotations

from typing import Any

from arreio.engine.core.model_io import ModelRequest
from arreio.engine.providers.anthropic import EPHEMERAL


def mark_for_claude(request: ModelRequest, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
    """Add the breakpoints in place. `messages` start with the system message when there is one."""
    if messages and messages[0]["role"] == "system":
        messages[0]["content"] = _system_blocks(request)
    if tools:
        tools[-1]["cache_control"] = EPHEMERAL
    newest = max((i for i, m in enumerate(messages) if m["role"] in ("user", "tool")), default=-1)
    # the newest turn may be a run of tool results: step back to the message before all of them
    while newest > 0 and messages[newest - 1]["role"] == "tool":
        newest -= 1
    for message in reversed(messages[1:newest] if newest > 1 else []):
        if _mark_content(message):
            return


def _system_blocks(request: ModelRequest) -> list[dict[str, Any]]:
    stable = "\n\n".join(b.text for b in request.system if b.stable and b.text)
    volatile = "\n\n".join(b.text for b in request.system if not b.stable and b.text)
    blocks: list[dict[str, Any]] = []
    if stable:
        blocks.append({"type": "text", "text": stable, "cache_control": EPHEMERAL})
    if volatile:
        blocks.append({"type": "text", "text": volatile})
    return blocks


def _mark_content(message: dict[str, Any]) -> bool:
    """Put the breakpoint on the message's last text; False when it has none to carry it."""
    content = message.get("content")
    if isinstance(content, str) and content:
        message["content"] = [{"type": "text", "text": content, "cache_control": EPHEMERAL}]
        return True
    if isinstance(content, list):
        for block in reversed(content):
            if block.get("type") == "text" and block.get("text"):
                block["cache_control"] = EPHEMERAL
                return True
    return False

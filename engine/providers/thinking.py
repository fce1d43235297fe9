"""The thinking-block rule: what a reasoning block becomes when the history goes to a model.

A signed thinking block is the producing model's own state. The model that wrote it can take it
back verbatim (Anthropic requires that, signature included, to continue a tool-use turn with
thinking on); any other model cannot verify the signature and would reject it. So, for each
assistant message:

- same model, and the adapter can replay signed thinking, and the block has a signature (or is a
  redacted block's encrypted payload) → kept as is;
- same model otherwise (an unsigned block, or a wire format with no slot for reasoning) → dropped:
  the model does not need its own reasoning echoed back as if it were its answer;
- another model (or an unstamped message) → a block with visible text becomes a text part wrapped in
  `<thinking>` tags, so the reasoning survives as context; an empty (redacted) block is dropped.

An assistant message left with no parts at all is dropped. Pure: the input list is not modified.
"""

from __future__ import annotations

from typing import Any

from arreio.engine.core.messages import Message, TextPart, ThinkingPart
from arreio.engine.core.model_io import StreamEvent, ThinkingChunk

_ROUTE_PREFIXES = ("litellm/", "anthropic/", "openai/")


def canonical_model(model: str | None) -> str:
    """The model name without routing prefixes, so `anthropic/claude-x`, `litellm/anthropic/claude-x`
    and the bare `claude-x` an adapter holds all compare equal."""
    name = (model or "").strip().lower()
    changed = True
    while changed:
        changed = False
        for prefix in _ROUTE_PREFIXES:
            if name.startswith(prefix):
                name = name[len(prefix) :]
                changed = True
    return name


def same_model(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and canonical_model(a) == canonical_model(b)


def prepare_thinking(
    messages: list[Message], target_model: str, *, can_replay: bool, keep_own: bool = False
) -> list[Message]:
    """The history as `target_model` may receive it, thinking blocks replayed or downgraded.
    `keep_own`: the model's own unsigned blocks are kept too, for a wire format that has a slot for
    them the server asked to be filled (DeepSeek's `reasoning_content`)."""
    out: list[Message] = []
    for msg in messages:
        if msg.role != "assistant" or not any(isinstance(p, ThinkingPart) for p in msg.parts):
            out.append(msg)
            continue
        mine = same_model(msg.model, target_model)
        parts = []
        for part in msg.parts:
            if not isinstance(part, ThinkingPart):
                parts.append(part)
            elif mine:
                if (can_replay and (part.signature or part.redacted)) or (keep_own and part.thinking):
                    parts.append(part)
            elif part.thinking.strip():
                parts.append(TextPart(text=f"<thinking>\n{part.thinking}\n</thinking>"))
        if parts:
            out.append(msg.model_copy(update={"parts": parts}))
    return out


def wire_block(part: ThinkingPart) -> dict[str, Any]:
    """A thinking block as Anthropic's Messages API takes it back (litellm's `thinking_blocks` use
    the same shape): the encrypted payload of a redacted block, or the text with its signature."""
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.redacted}
    return {"type": "thinking", "thinking": part.thinking, "signature": part.signature or ""}


def block_ends(blocks: Any) -> list[StreamEvent]:
    """litellm's `thinking_blocks` on a delta (Claude through litellm): a signature closes the
    block whose text came as `reasoning_content`; a redacted block is whole in one. Their text is
    not taken from here, or it would count twice."""
    out: list[StreamEvent] = []
    for block in blocks or []:
        get = block.get if isinstance(block, dict) else lambda key, b=block: getattr(b, key, None)
        if get("type") == "redacted_thinking" and get("data"):
            out.append(ThinkingChunk(text="", redacted=get("data")))
        elif get("type") == "thinking" and get("signature"):
            out.append(ThinkingChunk(text="", signature=get("signature")))
    return out

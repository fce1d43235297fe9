"""A model reply, folded from its stream (pure): the parts the assistant message holds, the tool
calls in declared order, the visible text, and the stream's end.

A stream that ends without `Done` is an incomplete reply (a cut connection, a provider that broke the
protocol): `fold` gives it a retryable error, so it is retried and never taken for a success.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from arreio.engine.core.messages import TextPart, ThinkingPart, ToolCallPart
from arreio.engine.core.model_io import Done, ProviderError, StreamEvent, TextChunk, ThinkingChunk, ToolCallDone
from arreio.engine.core.surrogates import repaired, repaired_value

INCOMPLETE = "the model's reply ended before it was complete (the stream stopped without its end marker)"


@dataclass
class Reply:
    parts: list = field(default_factory=list)
    calls: list[ToolCallPart] = field(default_factory=list)
    text: str = ""
    done: Done = field(default_factory=lambda: Done(stop_reason="end_turn"))


def fold(chunks: Iterable[StreamEvent]) -> Reply:
    """Thinking blocks first (a chunk carrying a signature closes its block; a redacted one is a
    block of its own), then the text, then the calls — the order providers expect them back."""
    text, thinking = "", ""
    blocks: list[ThinkingPart] = []
    calls: list[ToolCallPart] = []
    done: Done | None = None
    for chunk in chunks:
        if isinstance(chunk, TextChunk):
            text += chunk.text
        elif isinstance(chunk, ThinkingChunk) and chunk.redacted:
            blocks.append(ThinkingPart(thinking="", redacted=chunk.redacted))
        elif isinstance(chunk, ThinkingChunk):
            thinking += chunk.text
            if chunk.signature:
                blocks.append(ThinkingPart(thinking=thinking, signature=chunk.signature))
                thinking = ""
        elif isinstance(chunk, ToolCallDone):
            calls.append(ToolCallPart(id=chunk.id, name=chunk.name, arguments=chunk.arguments))
        elif isinstance(chunk, Done):
            done = chunk
    if done is None:
        done = Done(stop_reason="error", error=ProviderError(kind="retryable", message=INCOMPLETE))
    if thinking:
        blocks.append(ThinkingPart(thinking=thinking))
    # Only text UTF-8 can write goes on (surrogates.py): a pair split over two chunks is joined here.
    text, blocks, calls = repaired(text), [_thought(b) for b in blocks], [_call(c) for c in calls]
    parts: list = [*blocks, *([TextPart(text=text)] if text else []), *calls]
    return Reply(parts=parts, calls=calls, text=text, done=done)


def _thought(block: ThinkingPart) -> ThinkingPart:
    thinking = repaired(block.thinking)
    return block if thinking is block.thinking else block.model_copy(update={"thinking": thinking})


def _call(call: ToolCallPart) -> ToolCallPart:
    name, arguments = repaired(call.name), repaired_value(call.arguments)
    if name is call.name and arguments is call.arguments:
        return call
    return call.model_copy(update={"name": name, "arguments": arguments})

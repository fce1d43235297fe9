"""A Chat Completions reply asked for whole (`stream: false`), read as the one chunk of a stream.

Some servers cannot stream a reply that may call tools: llama-cpp-python's server answers a streamed
request with tools by a 500, "Automatic streaming tool choice is not supported". The adapter then asks
that server for whole replies (`OpenAIProvider`), and `as_chunk` hands each one to the same stream
reader, so text, reasoning, tool calls and the finish reason are read one way whichever came.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from arreio.engine.core.model_io import ProviderError

_REFUSED = ("not supported", "unsupported", "does not support", "cannot stream", "can't stream")


def refuses_streaming(exc: Exception) -> bool:
    """A refusal (400/422, or llama-cpp-python's 500) saying the server cannot stream this request."""
    if getattr(exc, "status_code", None) not in (400, 422, 500, 501):
        return False
    said = f"{getattr(exc, 'message', '')} {getattr(exc, 'body', '')}".lower()
    return "stream" in said and any(phrase in said for phrase in _REFUSED)


def as_chunk(response: Any) -> Any:
    """The response's choices as stream deltas (`message` → `delta`), its usage as the stream's last."""
    choices = []
    for choice in getattr(response, "choices", None) or []:
        message = getattr(choice, "message", None)
        calls = [
            SimpleNamespace(index=i, id=getattr(c, "id", None), function=getattr(c, "function", None))
            for i, c in enumerate(getattr(message, "tool_calls", None) or [])
        ]
        delta = SimpleNamespace(
            content=getattr(message, "content", None),
            tool_calls=calls,
            reasoning_content=getattr(message, "reasoning_content", None),
            reasoning=getattr(message, "reasoning", None),
            thinking_blocks=None,
        )
        choices.append(
            SimpleNamespace(
                index=getattr(choice, "index", 0),
                delta=delta,
                finish_reason=getattr(choice, "finish_reason", None) or "stop",
            )
        )
    return SimpleNamespace(usage=getattr(response, "usage", None), choices=choices)


def no_reply(provider: str) -> ProviderError:
    return ProviderError(kind="retryable", message=f"{provider}: the server's whole reply held no choices")

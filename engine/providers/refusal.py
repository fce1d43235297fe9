"""What an OpenAI-compatible server refused in a request, read from its 400/422, so the adapter can
shape the next request the way that server takes it (`OpenAIProvider._create`)."""

from __future__ import annotations

from typing import Any

OPTIONAL_FIELDS = ("prompt_cache_key", "stream_options")  # the run works without them, only cheaper or counted


def _refusal(exc: Exception) -> str:
    """What a 400/422 said (message and body), or "" for any other failure."""
    if getattr(exc, "status_code", None) not in (400, 422):
        return ""
    return f"{getattr(exc, 'message', '')} {getattr(exc, 'body', '')}"


def refused_field(exc: Exception, params: dict[str, Any]) -> str | None:
    """The optional field a 400/422 names as the reason the request was refused, or None."""
    said = _refusal(exc)
    return next((name for name in OPTIONAL_FIELDS if name in params and name in said), None)


def wants_reasoning_back(exc: Exception) -> bool:
    """A 400 saying the model's reasoning must come back with its turns (DeepSeek in thinking mode)."""
    said = _refusal(exc).lower()
    return "reasoning_content" in said and ("passed back" in said or "missing" in said)

"""What an OpenAI-compatible server refused in a request, read from its 400/422, so the adapter can
shape the next request the way that server takes it (`OpenAIProvider._create`), or name what was
wrong when nothing can be reshaped (a 404 from no API at all)."""

from __future__ import annotations

import re
from typing import Any

from arreio.engine.core.model_io import ProviderError

MIN_ROOM = 256  # less room than this for the reply: the conversation itself is too long (compact)
# OpenAI's wording, kept by vLLM, DeepSeek and others: "This model's maximum context length is 4096
# tokens. However, you requested 8342 tokens (150 in the messages, 8192 in the completion)."
_WINDOW = re.compile(r"maximum context length is (\d+) tokens")
_ASKED = re.compile(r"\((\d+) in the messages,? (\d+) in the completion")

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


def room_left(exc: Exception) -> int | None:
    """The reply cap that fits, when a refusal says the messages fit the window and only the asked-for
    reply does not; None when it says nothing of the kind or the messages alone nearly fill it."""
    said = _refusal(exc)
    window, asked = _WINDOW.search(said), _ASKED.search(said)
    if not window or not asked:
        return None
    room = int(window.group(1)) - int(asked.group(1))
    return room if MIN_ROOM <= room < int(asked.group(2)) else None


def wants_completion_tokens(exc: Exception) -> bool:
    """A 400 saying `max_tokens` is not taken, `max_completion_tokens` is (OpenAI's reasoning models
    behind Azure or a proxy: "Unsupported parameter: 'max_tokens' ... Use 'max_completion_tokens'")."""
    said = _refusal(exc)
    return "max_completion_tokens" in said and "max_tokens" in said.replace("max_completion_tokens", "")


def wrong_address(exc: Exception, err: ProviderError) -> ProviderError:
    """A 404 that is no API's error body (a router's "404 page not found"): the address is wrong, not
    the model, so it is named (a base_url without its /v1 is the usual cause)."""
    if err.status != 404 or isinstance(getattr(exc, "body", None), dict):
        return err
    url = getattr(getattr(getattr(exc, "response", None), "request", None), "url", None)
    where = f"POST {url}: " if url else ""
    return err.model_copy(
        update={
            "message": f"{err.message} ({where}is base_url the API's? OpenAI-compatible "
            "servers usually serve it under /v1)"[:500]
        }
    )

"""litellm adapter: every other vendor through `litellm.acompletion` streaming.

`model` is whatever follows `litellm/` in the model string (`gemini/gemini-2.5-pro`,
`ollama/qwen3`, `openai/<model>` against a compatible server …). litellm speaks the Chat Completions
chunk shape, so the OpenAI adapter's translation and stream reader serve here too.

Importing litellm costs 3–5 s and, unless told otherwise, fetches a price map over the network and
downloads tokenizers; the import happens on first use, with both switched off first.
"""

from __future__ import annotations

import gc
import os
from collections.abc import AsyncIterator
from typing import Any

from arreio.engine.providers.anthropic import thinking_param
from arreio.engine.providers.base import Done, ModelRequest, StreamEvent
from arreio.engine.providers.cache_marks import mark_for_claude
from arreio.engine.providers.openai import (
    ChatStreamReader,
    to_chat_messages,
    to_chat_tools,
)
from arreio.engine.providers.structured import openai_response_format
from arreio.engine.providers.vendor import VendorProvider
from arreio.engine.providers.wire import classify_exception, stream_cut


def import_litellm() -> Any:
    """litellm, imported offline. Setting these two variables is the one sanctioned write to the
    process environment: litellm reads them at import time and offers no other switch."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    import litellm

    litellm.suppress_debug_info = True  # its "Give Feedback / Get Help" banner would land in our output
    # the objects litellm builds at import live for the whole run; freezing them spares the
    # collector a walk over them on every cycle and at exit (~1 s)
    gc.freeze()
    return litellm


def is_claude(model: str) -> bool:
    """A Claude model behind litellm (Anthropic, Bedrock, Vertex): it gets cache marks, thinking,
    and its signed thinking blocks back."""
    return "claude" in model.lower()


class LiteLLMProvider(VendorProvider):
    """`Provider` over `litellm.acompletion`. `client` may be any object with an `acompletion`
    coroutine function (the litellm module itself by default)."""

    name = "litellm"

    def _make_client(self) -> Any:
        return import_litellm()

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        claude = is_claude(self.model)
        params: dict[str, Any] = {
            "model": self.model,
            "messages": to_chat_messages(request, self.model, replay_thinking=claude),
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": request.max_tokens,
            # the harness owns retries: litellm's own loop and the SDK's under it are both off
            "num_retries": 0,
            "max_retries": 0,
        }
        if request.tools:
            params["tools"] = to_chat_tools(request)
        if claude:
            mark_for_claude(request, params["messages"], params.get("tools") or [])
        if claude and request.thinking is not None:
            # litellm passes Anthropic's `thinking` object on to Claude (no temperature with it)
            params["thinking"] = thinking_param(request.thinking)
        elif request.temperature is not None:
            params["temperature"] = request.temperature
        if request.output_schema is not None:  # litellm maps it to each vendor's own structured output
            params["response_format"] = openai_response_format(request.output_schema)
        if self._api_key:
            params["api_key"] = self._api_key
        if self._base_url:
            params["api_base"] = self._base_url
        return params

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        reader = ChatStreamReader(self.name)
        stream: Any = None
        try:
            client = self._get_client()
            stream = await client.acompletion(**self.build_params(request))
            async for chunk in stream:
                for event in reader.feed(chunk):
                    yield event
            if reader.empty:
                # litellm ends a 200 that was no event stream (a server's error page, `{"error": …}`
                # while a model loads) as a finished reply: the run "succeeded" with no answer. A
                # model's reply, even an empty one, comes with its token count (asked for above).
                yield Done(stop_reason="error", usage=reader.usage, error=stream_cut(
                    self.name, "nothing came: no text, no tool call, no token count — not a model's reply"))
                return
            for event in reader.end():
                yield event
        except Exception as exc:  # noqa: BLE001 — every failure becomes data on Done
            yield Done(stop_reason="error", usage=reader.usage, error=classify_exception(exc, provider=self.name))
        finally:
            if stream is not None and hasattr(stream, "aclose"):
                try:
                    await stream.aclose()
                except Exception:  # noqa: BLE001 — closing a finished stream must not mask the result
                    pass

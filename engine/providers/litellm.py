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
from contextvars import ContextVar
from typing import Any

from arreio.engine.core.model_io import Done, ModelRequest, StreamEvent
from arreio.engine.providers.anthropic import thinking_param
from arreio.engine.providers.cache_marks import mark_for_claude
from arreio.engine.providers.openai import ChatStreamReader, to_chat_messages, to_chat_tools
from arreio.engine.providers.sse_tap import SseTap, line_error, not_a_stream, tap_of, tap_response
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


# Where the response hook leaves the tap of the response the current stream got: per task (the hook
# runs inside the request's own await), so two streams on one provider never read each other's.
_TAP: ContextVar[list[SseTap | None] | None] = ContextVar("litellm_tap", default=None)


async def _note_tap(response: Any) -> None:
    await tap_response(response)
    if (seen := _TAP.get()) is not None:
        seen[0] = tap_of(response)


class LiteLLMProvider(VendorProvider):
    """`Provider` over `litellm.acompletion`. `client` may be any object with an `acompletion`
    coroutine function (the litellm module itself by default)."""

    name = "litellm"
    _tapped: Any = None  # the AsyncOpenAI handed to litellm's OpenAI route (`_openai_client`)

    def _make_client(self) -> Any:
        return import_litellm()

    def _openai_client(self) -> Any:
        """For litellm's OpenAI route to a server of the user's (`openai/<model>` with a base_url: a
        llama.cpp or vLLM server): an AsyncOpenAI whose responses pass an SSE tap, so what litellm
        drops — llama.cpp's `error:` line, the page a 200 brought — reaches the user (sse_tap.py).
        None where it cannot be built (no key anywhere): litellm then makes its own, as before."""
        if self._tapped is None:
            import openai

            try:
                http = openai.DefaultAsyncHttpxClient(event_hooks={"response": [_note_tap]})
                self._tapped = openai.AsyncOpenAI(
                    api_key=self._api_key, base_url=self._base_url, max_retries=0, http_client=http
                )
            except openai.OpenAIError:
                self._tapped = False
        return self._tapped or None

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
            if self.model.startswith("openai/") and (client := self._openai_client()) is not None:
                params["client"] = client
        return params

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        reader = ChatStreamReader(self.name)
        stream: Any = None
        seen: list[SseTap | None] = [None]
        _TAP.set(seen)  # this task's: a sub-agent streaming beside it on this provider has its own
        try:
            client = self._get_client()
            stream = await client.acompletion(**self.build_params(request))
            async for chunk in stream:
                for event in reader.feed(chunk):
                    yield event
            tap = seen[0]
            if tap is not None and (tap.errors or not tap.event_stream):
                # What litellm made of it is no reply: the server's own error line, or what came instead
                # of an event stream (an error page; `{"error": …}` while a model loads), named.
                error = line_error(tap.errors[0], self.name) if tap.errors else not_a_stream(tap, self.name)
                yield Done(stop_reason="error", usage=reader.usage, error=error)
                return
            if reader.empty:
                # litellm ends a 200 that was no event stream (a server's error page, `{"error": …}`
                # while a model loads) as a finished reply: the run "succeeded" with no answer. A
                # model's reply, even an empty one, comes with its token count (asked for above).
                yield Done(
                    stop_reason="error",
                    usage=reader.usage,
                    error=stream_cut(
                        self.name, "nothing came: no text, no tool call, no token count — not a model's reply"
                    ),
                )
                return
            for event in reader.end():
                yield event
        except Exception as exc:  # noqa: BLE001 — every failure becomes data on Done
            # litellm ends a stream that stopped at an `error:` line as its own "stream ended" error:
            # the line says why (a context overflow is then compacted, not retried blind).
            said = seen[0].errors if seen[0] is not None else []
            error = line_error(said[0], self.name) if said else classify_exception(exc, provider=self.name)
            yield Done(stop_reason="error", usage=reader.usage, error=error)
        finally:
            if stream is not None and hasattr(stream, "aclose"):
                try:
                    await stream.aclose()
                except Exception:  # noqa: BLE001 — closing a finished stream must not mask the result
                    pass

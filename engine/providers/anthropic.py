"""Anthropic adapter: the official `anthropic` async client, Messages API, raw event streaming.

The SDK is imported on first use (it costs ~2 s), built with `max_retries=0`: the runner owns retries.
Prompt caching puts `cache_control` breakpoints on the stable prefix: the last stable system block,
the last tool, and the last message before the newest user turn (Anthropic allows four).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from arreio.engine.core.messages import ImagePart, Message, TextPart, ThinkingPart, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import (
    Done,
    ModelRequest,
    ProviderError,
    StopReason,
    StreamEvent,
    TextChunk,
    ThinkingChunk,
    Usage,
)
from arreio.engine.providers.sse_tap import not_a_stream, tap_of, tap_response
from arreio.engine.providers.structured import anthropic_output_config, claude_has_native_output
from arreio.engine.providers.thinking import prepare_thinking, wire_block
from arreio.engine.providers.vendor import VendorProvider
from arreio.engine.providers.wire import ToolCallAssembler, classify_exception, images_message, stream_cut, turns

EPHEMERAL = {"type": "ephemeral"}

_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "pause_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    # the reply filled the window: what arrived is complete text, cut like a max_tokens stop
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
}


# -- request translation -----------------------------------------------------------------------


def _image(part: ImagePart) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": part.media_type, "data": part.data}}


def _user_blocks(msg: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in msg.parts:
        if isinstance(part, TextPart) and part.text:
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(_image(part))
    return blocks


def _assistant_blocks(msg: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in msg.parts:
        if isinstance(part, ThinkingPart):
            blocks.append(wire_block(part))
        elif isinstance(part, TextPart) and part.text:
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallPart):
            blocks.append({"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments})
    return blocks


def _tool_round(results: list[ToolResultPart]) -> list[dict[str, Any]]:
    """One user message of tool results, then (when tools returned images) a separate user message
    holding the images, each labelled with the call it came from."""
    content = [
        {
            "type": "tool_result",
            "tool_use_id": r.call_id,
            "content": r.content or "(no output)",
            **({"is_error": True} if r.is_error else {}),
        }
        for r in results
    ]
    out = [{"role": "user", "content": content}]
    images = images_message(results, _image)
    return out + [images] if images else out


def to_anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """The harness history in Messages API shape. Consecutive `tool` messages form one user turn."""
    wire: list[dict[str, Any]] = []
    for kind, item in turns(messages):
        if kind == "tool_round":
            wire.extend(_tool_round(item))
            continue
        blocks = _user_blocks(item) if item.role == "user" else _assistant_blocks(item)
        if blocks:
            wire.append({"role": item.role, "content": blocks})
    return wire


def _mark_stable_message(wire: list[dict[str, Any]]) -> None:
    """Breakpoint on the message just before the newest user turn: everything up to it is the
    prefix the next call will share. Thinking blocks cannot carry cache_control."""
    last_user = max((i for i, m in enumerate(wire) if m["role"] == "user"), default=-1)
    if last_user < 1:
        return
    for block in reversed(wire[last_user - 1]["content"]):
        if block["type"] not in ("thinking", "redacted_thinking"):
            block["cache_control"] = EPHEMERAL
            return


def build_params(request: ModelRequest, model: str) -> dict[str, Any]:
    """The keyword arguments of `messages.create` for this request (streaming is added by the caller)."""
    history = prepare_thinking(request.messages, model, can_replay=True)
    stable = [b for b in request.system if b.stable and b.text]
    volatile = [b for b in request.system if not b.stable and b.text]
    system: list[dict[str, Any]] = [{"type": "text", "text": b.text} for b in stable]
    if system:
        system[-1]["cache_control"] = EPHEMERAL
    system += [{"type": "text", "text": b.text} for b in volatile]
    tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools]
    if tools:
        tools[-1]["cache_control"] = EPHEMERAL
    messages = to_anthropic_messages(history)
    _mark_stable_message(messages)
    params: dict[str, Any] = {"model": model, "max_tokens": request.max_tokens, "messages": messages}
    if system:
        params["system"] = system
    if tools:
        params["tools"] = tools
    if request.thinking is not None:
        params["thinking"] = thinking_param(request.thinking)
    if request.output_schema is not None and claude_has_native_output(model):  # older models: the answer tool
        params["output_config"] = anthropic_output_config(request.output_schema)
    # No `temperature`: the Messages API of current models takes no sampling parameters (the SDK's
    # `create` no longer accepts one), so a request's temperature is not sent here.
    return params


def thinking_param(thinking: int | str) -> dict[str, Any]:
    """The Messages API `thinking` object: a fixed budget, or adaptive (the model decides)."""
    if thinking == "adaptive":
        return {"type": "adaptive"}
    return {"type": "enabled", "budget_tokens": int(thinking)}


# -- the adapter -------------------------------------------------------------------------------


def _usage(raw: Any, into: Usage) -> Usage:
    """Anthropic reports usage in `message_start` and again (cumulative) in `message_delta`."""
    if raw is None:
        return into

    def pick(name: str, current: int) -> int:
        value = getattr(raw, name, None)
        return value if isinstance(value, int) else current

    return Usage(
        input_tokens=pick("input_tokens", into.input_tokens),
        output_tokens=pick("output_tokens", into.output_tokens),
        cache_read_tokens=pick("cache_read_input_tokens", into.cache_read_tokens),
        cache_write_tokens=pick("cache_creation_input_tokens", into.cache_write_tokens),
    )


class AnthropicProvider(VendorProvider):
    """`Provider` over the Anthropic Messages API."""

    name = "anthropic"

    def _make_client(self) -> Any:
        import anthropic  # lazy: ~2 s of import that `arreio --help` must not pay

        # The tap keeps the start of a 200 that is no event stream (a proxy's page), to name it (sse_tap.py).
        http = anthropic.DefaultAsyncHttpxClient(event_hooks={"response": [tap_response]}, **self._transport_kw())
        return anthropic.AsyncAnthropic(api_key=self._api_key, base_url=self._base_url, max_retries=0, http_client=http)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        usage = Usage()
        try:
            params = build_params(request, self.model)
            client = self._get_client()
            stream = await client.messages.create(**params, stream=True)
            calls = ToolCallAssembler()
            signatures: dict[int, str] = {}
            thinking_blocks: set[int] = set()
            stop: str | None = None
            async with stream:
                async for event in stream:
                    kind = event.type
                    if kind == "message_start":
                        usage = _usage(event.message.usage, usage)
                    elif kind == "content_block_start":
                        block = event.content_block
                        if block.type == "text" and block.text:
                            yield TextChunk(text=block.text)
                        elif block.type == "thinking":
                            thinking_blocks.add(event.index)
                            if block.thinking:
                                yield ThinkingChunk(text=block.thinking)
                        elif block.type == "redacted_thinking":
                            yield ThinkingChunk(text="", redacted=block.data)
                        elif block.type == "tool_use":
                            calls.add(event.index, id=block.id, name=block.name)
                    elif kind == "content_block_delta":
                        delta = event.delta
                        if delta.type == "text_delta":
                            yield TextChunk(text=delta.text)
                        elif delta.type == "thinking_delta":
                            yield ThinkingChunk(text=delta.thinking)
                        elif delta.type == "signature_delta":
                            signatures[event.index] = signatures.get(event.index, "") + delta.signature
                        elif delta.type == "input_json_delta":
                            calls.add(event.index, args=delta.partial_json)
                    elif kind == "content_block_stop":
                        if event.index in thinking_blocks and event.index in signatures:
                            yield ThinkingChunk(text="", signature=signatures.pop(event.index))
                    elif kind == "message_delta":
                        stop = event.delta.stop_reason or stop
                        usage = _usage(event.usage, usage)
            if stop is None:
                tap = tap_of(getattr(stream, "response", None))
                if tap is not None and not tap.event_stream:  # a page or a JSON error, not a cut stream
                    error = not_a_stream(tap, self.name, hint="is base_url the API's root, without /v1?")
                else:
                    error = stream_cut(self.name, "no stop reason")
                yield Done(stop_reason="error", usage=usage, error=error)
                return
            reason = _STOP.get(stop, "end_turn")
            finished = calls.finish(truncated=reason == "max_tokens")
            for call in finished:
                yield call
            if reason == "tool_use" and not finished:
                reason = "end_turn"
            yield Done(stop_reason=reason, usage=usage)
        except Exception as exc:  # noqa: BLE001 — every failure becomes data on Done
            yield Done(stop_reason="error", usage=usage, error=_error(exc))


def _error(exc: Exception) -> ProviderError:
    return classify_exception(exc, provider="anthropic")

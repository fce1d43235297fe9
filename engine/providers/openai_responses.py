"""OpenAI through the Responses API (`client.responses.create(stream=True)`).

Reasoning models (gpt-5, the o-series) keep their reasoning between tool calls only through this
API. Nothing is stored on OpenAI's side (`store: false`); each reasoning item comes back encrypted
(`include: ["reasoning.encrypted_content"]`) and the harness keeps it in the history:

- a reasoning item becomes a `ThinkingPart` whose text is the item's summary and whose `signature`
  is a token holding the item's id and encrypted content (`reasoning_token`). The thinking rule of
  `thinking.py` then applies unchanged: replayed verbatim (as a `reasoning` input item) to the model
  that wrote it, turned into `<thinking>` text for another model, dropped when it has no summary;
- reasoning summaries stream as `ThinkingChunk`s (the runner's `thinking_delta`);
- `function_call` output items become tool calls; each result goes back as a `function_call_output`
  with the same `call_id`, in declared order (the pairing invariant);
- usage is normalised like the Chat Completions reader's: `input_tokens` without the cached part.

The stream ends in `response.completed`, `response.incomplete` (max_output_tokens, content filter)
or `response.failed`; an `error` event or a stream that stops before any of them is a failure on
`Done`, classified by `wire.classify` like every other vendor's.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from arreio.engine.core.messages import ImagePart, Message, ThinkingPart, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import (
    Done,
    ModelRequest,
    ProviderError,
    StopReason,
    StreamEvent,
    TextChunk,
    ThinkingChunk,
    ToolCallDone,
    Usage,
)
from arreio.engine.core.nesting import json_loads
from arreio.engine.providers.openai import user_message
from arreio.engine.providers.thinking import prepare_thinking
from arreio.engine.providers.wire import (
    INVALID_ARGS_KEY,
    classify,
    classify_exception,
    images_message,
    parse_arguments,
    stream_cut,
    turns,
)

TOKEN_KIND = "openai_reasoning"
# gpt-5*, o1/o3/o4…, codex models reason; gpt-4.1, gpt-4o and gpt-5-chat do not (and refuse
# `reasoning` / encrypted content)
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5|codex|gpt-oss)(?!.*-chat)")
SUMMARY_SEPARATOR = "\n\n"


def is_reasoning_model(model: str) -> bool:
    return bool(_REASONING_MODEL.match(model.strip().lower()))


def reasoning_token(item_id: str, encrypted_content: str) -> str:
    """The `signature` a reasoning item is kept under: opaque to everything but this module."""
    return json.dumps(
        {"type": TOKEN_KIND, "id": item_id, "encrypted_content": encrypted_content}, separators=(",", ":")
    )


def read_token(signature: str | None) -> dict[str, str] | None:
    """The reasoning item a `signature` holds, or None (an Anthropic signature, or nothing)."""
    if not signature or not signature.startswith("{"):
        return None
    try:
        value = json_loads(signature)
    except ValueError:
        return None
    if (
        isinstance(value, dict)
        and value.get("type") == TOKEN_KIND
        and value.get("id")
        and value.get("encrypted_content")
    ):
        return value
    return None


# -- request translation -----------------------------------------------------------------------


def _image(part: ImagePart) -> dict[str, Any]:
    return {"type": "input_image", "image_url": f"data:{part.media_type};base64,{part.data}"}


def _user(msg: Message) -> dict[str, Any] | None:
    return user_message(msg, "input_text", _image)


def _assistant(msg: Message) -> list[dict[str, Any]]:
    """Reasoning items first, then the text, then the calls: the order the model produced them."""
    reasoning: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for part in msg.parts:
        if isinstance(part, ThinkingPart) and (token := read_token(part.signature)) is not None:
            summary = [{"type": "summary_text", "text": part.thinking}] if part.thinking else []
            reasoning.append(
                {
                    "type": "reasoning",
                    "id": token["id"],
                    "encrypted_content": token["encrypted_content"],
                    "summary": summary,
                }
            )
        elif isinstance(part, ToolCallPart):
            calls.append(
                {
                    "type": "function_call",
                    "call_id": part.id,
                    "name": part.name,
                    "arguments": json.dumps(part.arguments, ensure_ascii=False),
                }
            )
    text = [{"role": "assistant", "content": msg.text}] if msg.text else []
    return reasoning + text + calls


def _tool_round(results: list[ToolResultPart]) -> list[dict[str, Any]]:
    """One `function_call_output` per result (same call id), then the images they returned in a user
    message of their own, each labelled with its call."""
    out: list[dict[str, Any]] = [
        {"type": "function_call_output", "call_id": r.call_id, "output": r.content or "(no output)"} for r in results
    ]
    images = images_message(results, _image)
    if images:
        images["content"] = [
            {"type": "input_text", "text": c["text"]} if c.get("type") == "text" else c for c in images["content"]
        ]
        out.append(images)
    return out


def to_responses_input(request: ModelRequest, model: str) -> list[dict[str, Any]]:
    """The history as Responses input items; reasoning replayed to its own model, downgraded for others."""
    items: list[dict[str, Any]] = []
    for kind, item in turns(prepare_thinking(request.messages, model, can_replay=True)):
        if kind == "tool_round":
            items.extend(_tool_round(item))
        elif item.role == "user":
            if (message := _user(item)) is not None:
                items.append(message)
        else:
            items.extend(_assistant(item))
    return items


def to_responses_tools(request: ModelRequest) -> list[dict[str, Any]]:
    # strict is required by the API; our schemas (optional fields, open objects) are not strict-mode schemas
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.input_schema,
            "strict": False,
        }
        for t in request.tools
    ]


@dataclass(frozen=True)
class ResponsesOptions:
    """The `openai.*` settings that shape a Responses request (see `OpenAISettings` in config)."""

    reasoning_summary: str = "auto"  # auto | concise | detailed | off
    reasoning_effort: str | None = None  # None: the model's default


def build_responses_params(
    request: ModelRequest, model: str, *, cache_key: str | None, options: ResponsesOptions = ResponsesOptions()
) -> dict[str, Any]:
    """The keyword arguments of `responses.create` (stable system blocks first, as instructions)."""
    blocks = [b for b in request.system if b.stable] + [b for b in request.system if not b.stable]
    instructions = "\n\n".join(b.text for b in blocks if b.text)
    params: dict[str, Any] = {
        "model": model,
        "input": to_responses_input(request, model),
        "stream": True,
        "store": False,
        "max_output_tokens": request.max_tokens,
    }
    if instructions:
        params["instructions"] = instructions
    if request.tools:
        params["tools"] = to_responses_tools(request)
    if is_reasoning_model(model):
        params["include"] = ["reasoning.encrypted_content"]
        reasoning: dict[str, Any] = {}
        if options.reasoning_summary != "off":
            reasoning["summary"] = options.reasoning_summary
        if options.reasoning_effort:
            reasoning["effort"] = options.reasoning_effort
        if reasoning:
            params["reasoning"] = reasoning
    if request.temperature is not None:
        params["temperature"] = request.temperature
    if cache_key:
        params["prompt_cache_key"] = cache_key
    return params


# -- stream reading ----------------------------------------------------------------------------


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    value = getattr(obj, name, default)
    return default if value is None else value


@dataclass
class _Call:
    call_id: str = ""
    name: str = ""
    chunks: list[str] = field(default_factory=list)
    final: str | None = None  # the arguments of the finished item (authoritative)


class ResponsesStreamReader:
    """Turns Responses stream events (the openai SDK's typed events) into stream events.

    `feed` returns the live events of one event; `end` returns the tool calls and the `Done`."""

    def __init__(self, provider: str = "openai") -> None:
        self.provider = provider
        self.usage = Usage()
        self._calls: dict[int, _Call] = {}
        self._summary_at: dict[str, int] = {}  # reasoning item id -> summary part last streamed
        self._streamed: set[str] = set()  # reasoning items whose summary arrived as deltas
        self._refused = False
        self._status: str | None = None  # completed | incomplete | failed
        self._incomplete: str | None = None
        self.error: ProviderError | None = None

    def feed(self, event: Any) -> list[StreamEvent]:
        kind = _get(event, "type", "")
        if kind == "response.output_text.delta":
            return [TextChunk(text=event.delta)] if event.delta else []
        if kind == "response.refusal.delta":
            self._refused = True
            return [TextChunk(text=event.delta)] if event.delta else []
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return self._thinking(event)
        if kind == "response.output_item.added":
            item = event.item
            if _get(item, "type") == "function_call":
                self._calls[event.output_index] = _Call(
                    _get(item, "call_id", ""), _get(item, "name", ""), [_get(item, "arguments", "")]
                )
            return []
        if kind == "response.function_call_arguments.delta":
            self._calls.setdefault(event.output_index, _Call()).chunks.append(event.delta or "")
            return []
        if kind == "response.output_item.done":
            return self._item_done(event.output_index, event.item)
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            self._finish(kind.removeprefix("response."), event.response)
            return []
        if kind == "error":
            self.error = self._stream_error(_get(event, "code"), _get(event, "message") or "stream error")
        return []

    def _stream_error(self, code: str | None, message: str) -> ProviderError:
        err = classify(None, {"code": code, "message": message})
        return err.model_copy(update={"message": f"{self.provider}: {err.message}"[:500]})

    def _thinking(self, event: Any) -> list[StreamEvent]:
        item_id = _get(event, "item_id", "")
        part = _get(event, "summary_index", _get(event, "content_index", 0))
        self._streamed.add(item_id)
        text = event.delta or ""
        last = self._summary_at.get(item_id)
        if last is not None and part != last:
            text = SUMMARY_SEPARATOR + text  # a new summary part of the same item
        self._summary_at[item_id] = part
        return [ThinkingChunk(text=text)] if text else []

    def _item_done(self, index: int, item: Any) -> list[StreamEvent]:
        kind = _get(item, "type")
        if kind == "function_call":
            call = self._calls.setdefault(index, _Call())
            call.call_id = _get(item, "call_id", call.call_id)
            call.name = _get(item, "name", call.name)
            call.final = _get(item, "arguments", "")
            return []
        if kind != "reasoning":
            return []
        out: list[StreamEvent] = []
        item_id = _get(item, "id", "")
        if item_id not in self._streamed:  # a summary that came only whole, on the finished item
            texts = [_get(s, "text", "") for s in _get(item, "summary", []) or []]
            if text := SUMMARY_SEPARATOR.join(t for t in texts if t):
                out.append(ThinkingChunk(text=text))
        if encrypted := _get(item, "encrypted_content"):
            out.append(ThinkingChunk(text="", signature=reasoning_token(item_id, encrypted)))
        return out

    def _finish(self, status: str, response: Any) -> None:
        self._status = status
        if (raw := _get(response, "usage")) is not None:
            self._read_usage(raw)
        if status == "incomplete":
            self._incomplete = _get(_get(response, "incomplete_details"), "reason", "max_output_tokens")
        elif status == "failed":
            err = _get(response, "error")
            self.error = self._stream_error(_get(err, "code"), _get(err, "message") or "the response failed")

    def _read_usage(self, raw: Any) -> None:
        details = _get(raw, "input_tokens_details")
        cached = _get(details, "cached_tokens", 0) or 0
        written = _get(details, "cache_write_tokens", 0) or 0
        self.usage = Usage(
            input_tokens=max(0, (_get(raw, "input_tokens", 0) or 0) - cached - written),
            output_tokens=_get(raw, "output_tokens", 0) or 0,
            cache_read_tokens=cached,
            cache_write_tokens=written,
        )

    def _tool_calls(self, *, truncated: bool) -> list[ToolCallDone]:
        out: list[ToolCallDone] = []
        for index in sorted(self._calls):
            call = self._calls[index]
            if call.final is None and truncated:
                continue  # cut off by max_output_tokens: half a call is worse than none
            raw = call.final if call.final is not None else "".join(call.chunks)
            args = parse_arguments(raw)
            if args is None:
                if truncated:
                    continue
                args = {INVALID_ARGS_KEY: raw}
            out.append(ToolCallDone(id=call.call_id or f"call_{index}", name=call.name, arguments=args))
        return out

    def end(self) -> list[StreamEvent]:
        if self.error is not None:
            return [Done(stop_reason="error", usage=self.usage, error=self.error)]
        if self._status is None:
            return [
                Done(stop_reason="error", usage=self.usage, error=stream_cut(self.provider, "no response.completed"))
            ]
        reason: StopReason = "end_turn"
        if self._status == "incomplete":
            reason = "refusal" if self._incomplete == "content_filter" else "max_tokens"
        calls = self._tool_calls(truncated=reason == "max_tokens")
        if self._refused:
            reason = "refusal"
        elif calls and reason == "end_turn":
            reason = "tool_use"
        return [*calls, Done(stop_reason=reason, usage=self.usage)]


async def stream_responses(client: Any, params: dict[str, Any], provider: str = "openai") -> AsyncIterator[StreamEvent]:
    """One streamed Responses call, every failure encoded on the final `Done`."""
    reader = ResponsesStreamReader(provider)
    try:
        stream = await client.responses.create(**params)
        async with stream:
            async for event in stream:
                for out in reader.feed(event):
                    yield out
                if reader.error is not None:
                    break  # an error event ends the reply; what streamed before it is discarded
        for out in reader.end():
            yield out
    except Exception as exc:  # noqa: BLE001 — every failure becomes data on Done
        yield Done(stop_reason="error", usage=reader.usage, error=classify_exception(exc, provider=provider))

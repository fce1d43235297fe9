"""OpenAI adapter: the official `openai` async client, Chat Completions streaming (and, for OpenAI
itself, the Responses API of `openai_responses.py`: see `OpenAIProvider`).

Chat Completions is the shape every OpenAI-compatible server speaks (vLLM, Ollama, LM Studio), so
`base_url` points this adapter at any of them. The translation and the chunk reader here are shared
with the litellm adapter, whose stream uses the same chunk shape.

Usage is normalised to Anthropic's meaning, which the price table and the cache share rely on:
`input_tokens` counts only the input that was neither read from nor written to the cache
(OpenAI's `prompt_tokens` includes the cached part, so it is subtracted).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from typing import Any

from arreio.engine.core.messages import ImagePart, Message, TextPart, ThinkingPart, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import Done, ModelRequest, StopReason, StreamEvent, ThinkingChunk, ToolCallDone, Usage
from arreio.engine.providers.refusal import (
    refused_field,
    room_left,
    wants_completion_tokens,
    wants_reasoning_back,
    wrong_address,
)
from arreio.engine.providers.sse_tap import SseTap, line_error, not_a_stream, tap_of, tap_response
from arreio.engine.providers.structured import openai_response_format, openai_text_format
from arreio.engine.providers.think_tags import ThinkTags, content_chunks
from arreio.engine.providers.thinking import block_ends, prepare_thinking, wire_block
from arreio.engine.providers.vendor import VendorProvider
from arreio.engine.providers.whole_reply import as_chunk, no_reply, refuses_streaming
from arreio.engine.providers.wire import ToolCallAssembler, classify_exception, images_message, stream_cut, turns

CACHE_KEY_MAX = 64  # OpenAI refuses a longer prompt_cache_key

_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_BROKEN = {"abort", "error"}  # the server stopped the reply itself (vLLM, SGLang; OpenRouter's mid-stream error)


def prompt_cache_key(session_id: str) -> str:
    """The session id, or a stable digest of it when it is longer than OpenAI accepts."""
    if len(session_id) <= CACHE_KEY_MAX:
        return session_id
    return "arreio-" + hashlib.sha256(session_id.encode()).hexdigest()[:48]


# -- request translation -----------------------------------------------------------------------


def _image_url(part: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{part.media_type};base64,{part.data}"}}


def user_message(msg: Message, text_type: str = "text", image: Any = None) -> dict[str, Any] | None:
    """A user message in OpenAI's shape: plain content when it is text only, else typed parts
    (`text_type` and `image` differ between Chat Completions and the Responses API)."""
    if not any(isinstance(p, ImagePart) for p in msg.parts):
        return {"role": "user", "content": msg.text} if msg.text else None
    content: list[dict[str, Any]] = []
    for part in msg.parts:
        if isinstance(part, TextPart) and part.text:
            content.append({"type": text_type, "text": part.text})
        elif isinstance(part, ImagePart):
            content.append((image or _image_url)(part))
    return {"role": "user", "content": content}


def _thinking_blocks(msg: Message) -> list[dict[str, Any]]:
    """Signed and redacted thinking in litellm's `thinking_blocks` shape (replayed to Claude)."""
    return [wire_block(p) for p in msg.parts if isinstance(p, ThinkingPart) and (p.redacted or p.signature)]


def _assistant(msg: Message, reasoning: bool = False) -> dict[str, Any] | None:
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
        }
        for c in msg.parts
        if isinstance(c, ToolCallPart)
    ]
    text = msg.text
    if not text and not calls:
        return None
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        out["tool_calls"] = calls
    if thinking := _thinking_blocks(msg):
        out["thinking_blocks"] = thinking
    if reasoning:  # present on every assistant turn: DeepSeek refuses a tool-call turn without the field
        out["reasoning_content"] = "".join(
            p.thinking for p in msg.parts if isinstance(p, ThinkingPart) and not p.redacted
        )
    return out


def _tool_round(results: list[ToolResultPart]) -> list[dict[str, Any]]:
    """One `role: tool` message per result, then one user message with any images they returned:
    a tool message cannot hold an image."""
    out: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": r.call_id, "content": r.content or "(no output)"} for r in results
    ]
    images = images_message(results, _image_url)
    return out + [images] if images else out


def to_chat_messages(
    request: ModelRequest, model: str, *, replay_thinking: bool = False, reasoning: bool = False
) -> list[dict[str, Any]]:
    """The request as Chat Completions messages: system first (stable blocks before volatile ones),
    then the history. Thinking is downgraded (this wire format has no slot to replay reasoning),
    except with `replay_thinking` (Claude through litellm): the model's own signed and redacted
    blocks then ride along as `thinking_blocks`, which litellm hands back to Claude; and with
    `reasoning` (a server that asked for it, DeepSeek in thinking mode): the model's own reasoning
    goes back as each assistant turn's `reasoning_content`."""
    blocks = [b for b in request.system if b.stable] + [b for b in request.system if not b.stable]
    system = "\n\n".join(b.text for b in blocks if b.text)
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for kind, item in turns(prepare_thinking(request.messages, model, can_replay=replay_thinking, keep_own=reasoning)):
        if kind == "tool_round":
            wire.extend(_tool_round(item))
            continue
        message = user_message(item) if item.role == "user" else _assistant(item, reasoning)
        if message is not None:
            wire.append(message)
    return wire


def to_chat_tools(request: ModelRequest) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in request.tools
    ]


# -- stream reading ----------------------------------------------------------------------------


class ChatStreamReader:
    """Turns Chat Completions chunks (the openai SDK's or litellm's) into stream events.

    `feed` returns the live events of one chunk; `end` returns the tool calls and the `Done`.
    """

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.usage = Usage()
        self.counted = False  # the server sent its token counts
        self._calls = ToolCallAssembler()
        self._slots: dict[int, tuple[int, str]] = {}  # stream index -> (assembler slot, call id)
        self._next_slot = 0
        self._finish: str | None = None
        self._received = False  # any text, reasoning or tool call came
        self._tags = ThinkTags()  # a leading <think> block in the content is reasoning (think_tags.py)

    def feed(self, chunk: Any) -> list[StreamEvent]:
        if (raw := getattr(chunk, "usage", None)) is not None:
            self._read_usage(raw)
        out: list[StreamEvent] = []
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) not in (0, None):
                continue
            delta = getattr(choice, "delta", None)
            if delta is not None:
                # reasoning from compatible servers: vLLM/DeepSeek say reasoning_content, Ollama reasoning
                reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
                if isinstance(reasoning, str) and reasoning:
                    out.append(ThinkingChunk(text=reasoning))
                out.extend(block_ends(getattr(delta, "thinking_blocks", None)))
                content = getattr(delta, "content", None)
                if isinstance(content, list):  # Mistral's magistral: typed chunks, thinking among them
                    out.extend(content_chunks(content, self._tags))
                elif content:
                    out.extend(self._tags.feed(content))
                for position, tc in enumerate(getattr(delta, "tool_calls", None) or []):
                    self._read_tool_delta(tc, position)
                self._received = self._received or bool(out) or bool(self._calls)
            if getattr(choice, "finish_reason", None):
                self._finish = choice.finish_reason
        return out

    def _read_tool_delta(self, tc: Any, position: int) -> None:
        indexed = isinstance(getattr(tc, "index", None), int)
        index = tc.index if indexed else position
        call_id = getattr(tc, "id", None) or ""
        fn = getattr(tc, "function", None)
        slot = self._slots.get(index)
        # some servers send every call at index 0, told apart only by a new id; some (Gemini's
        # endpoint, proxies) send whole calls with neither index nor id, told apart by a new name
        # after arguments that are already complete
        named_again = not indexed and not call_id and getattr(fn, "name", None) and slot and self._calls.whole(slot[0])
        if slot is None or (call_id and slot[1] and call_id != slot[1]) or named_again:
            slot = (self._next_slot, call_id)
            self._next_slot += 1
            self._slots[index] = slot
        elif call_id and not slot[1]:
            self._slots[index] = slot = (slot[0], call_id)
        self._calls.add(
            slot[0], id=call_id or None, name=getattr(fn, "name", None), args=getattr(fn, "arguments", None)
        )

    def _read_usage(self, raw: Any) -> None:
        prompt = getattr(raw, "prompt_tokens", None) or 0
        details = getattr(raw, "prompt_tokens_details", None)
        cached = (
            getattr(details, "cached_tokens", None)
            or getattr(raw, "cache_read_input_tokens", None)
            or getattr(raw, "prompt_cache_hit_tokens", None)
            or 0
        )  # the last is DeepSeek's name
        written = getattr(raw, "cache_creation_input_tokens", None) or 0
        self.counted = True
        self.usage = Usage(
            input_tokens=max(0, prompt - cached - written),
            output_tokens=getattr(raw, "completion_tokens", None) or 0,
            cache_read_tokens=cached,
            cache_write_tokens=written,
        )

    @property
    def empty(self) -> bool:
        """Nothing a model sends came: no text, reasoning or tool call, and no token count."""
        return not self._received and not self._calls and self.usage == Usage()

    def end(self, tap: SseTap | None = None) -> list[StreamEvent]:
        """The calls and the `Done`. `tap` (when the stream had one) tells what the SDK dropped: an
        `error:` line is the reply's real end; `data: [DONE]` without a `finish_reason` is a reply
        the server finished without saying why, not a cut one."""
        if tap is not None and tap.errors:
            return [Done(stop_reason="error", usage=self.usage, error=line_error(tap.errors[0], self.provider))]
        if tap is not None and not tap.event_stream and self._finish is None:
            return [Done(stop_reason="error", usage=self.usage, error=not_a_stream(tap, self.provider))]
        finish = self._finish
        if finish is None and tap is not None and tap.done and self._received:
            finish = "stop"
        if finish is None:
            return [Done(stop_reason="error", usage=self.usage, error=stream_cut(self.provider, "no finish_reason"))]
        if finish in _BROKEN:  # vLLM ends an aborted request with "abort" and [DONE]: half a reply
            return [
                Done(
                    stop_reason="error", usage=self.usage, error=stream_cut(self.provider, f"finish_reason {finish!r}")
                )
            ]
        reason = _STOP.get(finish, "end_turn")
        calls: list[ToolCallDone] = self._calls.finish(truncated=reason == "max_tokens")
        if calls and reason == "end_turn":
            reason = "tool_use"  # several servers finish a tool-calling reply with "stop"
        elif reason == "tool_use" and not calls:
            reason = "end_turn"
        usage = self.usage if self.counted else Usage(estimated=True)  # no counts came: the runner estimates
        return [*self._tags.end(), *calls, Done(stop_reason=reason, usage=usage)]


# -- the adapter -------------------------------------------------------------------------------


OpenAIApi = str  # "auto" | "responses" | "chat"


def is_openai_host(client: Any) -> bool:
    """The client talks to OpenAI itself (not a compatible server behind `base_url`)."""
    host = getattr(getattr(client, "base_url", None), "host", "") or ""
    return host == "openai.com" or host.endswith(".openai.com")


class OpenAIProvider(VendorProvider):
    """`Provider` over OpenAI: the Responses API for OpenAI itself, Chat Completions for any
    compatible server. `api` decides: "auto" (by the host the client talks to, which the SDK takes
    from `base_url` or OPENAI_BASE_URL), "responses" or "chat" (config `openai.api`)."""

    name = "openai"

    def __init__(self, model: str, *, api: OpenAIApi = "auto", responses: Any = None, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.api = api
        self._responses_options = responses  # openai_responses.ResponsesOptions, or None for defaults
        self._refused: set[str] = set()  # optional request fields this server refused (see _create)
        self._echo_reasoning = False  # the server asked for the model's reasoning back (see _create)
        self._cap_name = "max_tokens"  # or max_completion_tokens, when the server refused max_tokens
        self._whole = False  # the server cannot stream this kind of request: replies are asked for whole

    def _make_client(self) -> Any:
        import openai  # lazy: ~1 s of import that `arreio --help` must not pay

        # the tap sees what the SDK's SSE decoder drops (sse_tap.py)
        http = openai.DefaultAsyncHttpxClient(event_hooks={"response": [tap_response]}, **self._transport_kw())
        return openai.AsyncOpenAI(api_key=self._api_key, base_url=self._base_url, max_retries=0, http_client=http)

    def speaks_responses(self, client: Any) -> bool:
        return self.api == "responses" or (self.api == "auto" and is_openai_host(client))

    def build_responses_params(self, request: ModelRequest) -> dict[str, Any]:
        from arreio.engine.providers.openai_responses import ResponsesOptions, build_responses_params

        session = self._session_id or request.session_id
        params = build_responses_params(
            request,
            self.model,
            cache_key=prompt_cache_key(session) if session else None,
            options=self._responses_options or ResponsesOptions(),
        )
        if request.output_schema is not None:  # structured output: `text.format` (engine/providers/structured.py)
            params["text"] = {**(params.get("text") or {}), "format": openai_text_format(request.output_schema)}
        return params

    def build_params(self, request: ModelRequest, client: Any) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": to_chat_messages(request, self.model, reasoning=self._echo_reasoning),
            **({"stream": False} if self._whole else {"stream": True, "stream_options": {"include_usage": True}}),
        }
        if request.tools:
            params["tools"] = to_chat_tools(request)
        # OpenAI itself wants max_completion_tokens (reasoning models refuse max_tokens); compatible
        # servers know max_tokens best, unless one said otherwise (Azure with a reasoning model)
        newer = is_openai_host(client) or self._cap_name == "max_completion_tokens"
        params["max_completion_tokens" if newer else "max_tokens"] = request.max_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if session := (self._session_id or request.session_id):
            params["prompt_cache_key"] = prompt_cache_key(session)
        if request.output_schema is not None:  # structured output: the answer is JSON meeting the schema
            params["response_format"] = openai_response_format(request.output_schema)
        return params

    async def _create(self, client: Any, request: ModelRequest, cap: int | None = None) -> Any:
        """The Chat Completions stream, shaped by what this server refused (refusal.py): an optional
        field it does not take is dropped (Groq, Cerebras, Mistral, older Azure); the model's reasoning
        goes back when it asks (DeepSeek); max_tokens becomes max_completion_tokens when it says so
        (Azure with a reasoning model); a reply cap larger than the room its window leaves is cut
        to fit, this call only (vLLM with a small max_model_len refused every call: "4096 tokens ...
        150 in the messages, 8192 in the completion"). The call is then made again at once."""
        params = self.build_params(request, client)
        for name in self._refused:
            params.pop(name, None)
        if cap is not None:
            params["max_completion_tokens" if "max_completion_tokens" in params else "max_tokens"] = cap
        try:
            return await client.chat.completions.create(**params)
        except Exception as exc:
            if (name := refused_field(exc, params)) is not None:
                self._refused.add(name)
            elif not self._echo_reasoning and wants_reasoning_back(exc):
                self._echo_reasoning = True
            elif "max_tokens" in params and wants_completion_tokens(exc):
                self._cap_name = "max_completion_tokens"
            elif cap is None and (room := room_left(exc)) is not None:
                cap = room
            elif params.get("stream") and refuses_streaming(exc):
                self._whole = True  # llama-cpp-python: "Automatic streaming tool choice is not supported"
            else:
                raise
            return await self._create(client, request, cap)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        reader = ChatStreamReader(self.name)
        try:
            client = self._get_client()
            if self.speaks_responses(client):
                from arreio.engine.providers.openai_responses import stream_responses

                async for event in stream_responses(client, self.build_responses_params(request), self.name):
                    yield event
                return
            stream = await self._create(client, request)
            if self._whole:  # a whole reply, read as one chunk (whole_reply.py)
                whole = (
                    [*reader.feed(as_chunk(stream)), *reader.end()]
                    if getattr(stream, "choices", None)
                    else [Done(stop_reason="error", error=no_reply(self.name))]
                )
                for event in whole:
                    yield event
                return
            async with stream:
                async for chunk in stream:
                    for event in reader.feed(chunk):
                        yield event
            for event in reader.end(tap_of(getattr(stream, "response", None))):
                yield event
        except Exception as exc:  # noqa: BLE001 — every failure becomes data on Done
            yield Done(
                stop_reason="error",
                usage=reader.usage,
                error=wrong_address(exc, classify_exception(exc, provider=self.name)),
            )

"""Raw Chat Completions SSE fixtures replayed through the real `openai` SDK (local server) into the adapter."""

from __future__ import annotations

from provider_fakes import Reply, collect

from arreio.engine.core.messages import ImagePart, Message, TextPart, ThinkingPart, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import (
    Done,
    ModelRequest,
    SystemBlock,
    TextChunk,
    ThinkingChunk,
    ToolCallDone,
    ToolSpec,
    Usage,
)
from arreio.engine.providers.openai import CACHE_KEY_MAX, OpenAIProvider, prompt_cache_key

MODEL = "gpt-5"


def provider(server, session_id: str | None = "sess-1") -> OpenAIProvider:
    return OpenAIProvider(
        MODEL, api_key="test-key", base_url=f"{server.url}/v1", session_id=session_id, transport=server.transport
    )


def request(**kw) -> ModelRequest:
    kw.setdefault("messages", [Message.user("hi")])
    return ModelRequest(model=f"openai/{MODEL}", **kw)


def replay(server, quirk: str, req: ModelRequest | None = None, **kw) -> list:
    server.push(Reply.stream("openai", quirk))
    return collect(provider(server, **kw), req or request())


def test_text_only_streams_deltas_and_ends_with_usage(wire):
    events = replay(wire, "text_only")
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["Hello", ", world."]
    assert events[-1] == Done(stop_reason="end_turn", usage=Usage(input_tokens=30, output_tokens=5))
    seen = wire.seen[0]
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer test-key"
    assert seen.headers.get("x-stainless-retry-count") == "0"
    body = seen.body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["prompt_cache_key"] == "sess-1"
    assert body["max_tokens"] == 8192  # a compatible wire: the widely understood name


def test_tool_call_args_assembled_from_partial_json(wire):
    events = replay(wire, "tool_call")
    assert events[0] == TextChunk(text="Reading it.")
    calls = [e for e in events if isinstance(e, ToolCallDone)]
    assert calls == [ToolCallDone(id="call_01", name="read_file", arguments={"path": "README.md", "limit": 20})]
    assert events[-1].stop_reason == "tool_use"


def test_parallel_tool_calls_keep_declared_order(wire):
    events = replay(wire, "parallel_tool_calls")
    calls = [(e.id, e.name, e.arguments) for e in events if isinstance(e, ToolCallDone)]
    assert calls == [
        ("call_a", "read_file", {"path": "a.txt"}),
        ("call_b", "grep", {"pattern": "TODO"}),
        ("call_c", "list_dir", {"path": "."}),
    ]


def test_tool_args_empty_string_then_braces_mean_no_arguments(wire):
    events = replay(wire, "tool_args_empty_then_braces")
    assert [(e.id, e.arguments) for e in events if isinstance(e, ToolCallDone)] == [("call_e1", {}), ("call_e2", {})]


def test_calls_sent_at_one_index_with_new_ids_stay_separate_and_stop_becomes_tool_use(wire):
    events = replay(wire, "calls_all_at_index_zero")
    calls = [(e.id, e.arguments) for e in events if isinstance(e, ToolCallDone)]
    assert calls == [("call_x", {"path": "x"}), ("call_y", {"path": "y"})]
    assert events[-1].stop_reason == "tool_use"  # the wire said "stop"; the calls say otherwise


def test_reasoning_content_streams_as_thinking(wire):
    events = replay(wire, "reasoning_content")
    assert [e.text for e in events if isinstance(e, ThinkingChunk)] == ["Think first. ", "Then answer."]
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["42."]


def test_length_stop_is_max_tokens_and_drops_the_truncated_call(wire):
    events = replay(wire, "max_tokens_stop")
    assert not [e for e in events if isinstance(e, ToolCallDone)]
    assert events[-1].stop_reason == "max_tokens"


def test_cached_tokens_are_split_out_of_prompt_tokens(wire):
    events = replay(wire, "cache_usage")
    assert events[-1].usage == Usage(input_tokens=392, output_tokens=7, cache_read_tokens=4608)


def test_long_session_id_is_hashed_into_the_cache_key(wire):
    long_id = "s" * 100
    key = prompt_cache_key(long_id)
    assert len(key) <= CACHE_KEY_MAX and key == prompt_cache_key(long_id) and key != prompt_cache_key("t" * 100)
    replay(wire, "text_only", session_id=long_id)
    assert wire.seen[0].body["prompt_cache_key"] == key


def test_no_session_sends_no_cache_key(wire):
    replay(wire, "text_only", session_id=None)
    assert "prompt_cache_key" not in wire.seen[0].body


def test_request_translation_system_tools_results_and_images(wire):
    image = ImagePart(media_type="image/png", data="iVBORw0KGgo=")
    history = [
        Message.user("look"),
        Message.assistant(
            [
                ThinkingPart(thinking="private", signature="sig"),
                TextPart(text="Looking."),
                ToolCallPart(id="c1", name="screenshot"),
                ToolCallPart(id="c2", name="read_file", arguments={"path": "a"}),
            ],
            MODEL,
        ),
        Message.tool_result(ToolResultPart(call_id="c1", name="screenshot", content="1 image", images=[image])),
        Message.tool_result(ToolResultPart(call_id="c2", name="read_file", content="A")),
    ]
    req = request(
        messages=history,
        system=[
            SystemBlock(name="clock", text="now", stable=False),
            SystemBlock(name="identity", text="You are arreio."),
        ],
        tools=[ToolSpec(name="read_file", description="Read a file.", input_schema={"type": "object"})],
    )
    replay(wire, "text_only", req)
    body = wire.seen[0].body
    msgs = body["messages"]
    assert msgs[0] == {"role": "system", "content": "You are arreio.\n\nnow"}  # stable before volatile
    assert msgs[1] == {"role": "user", "content": "look"}
    assistant = msgs[2]
    assert assistant["content"] == "Looking."  # own reasoning is not replayed over this wire
    assert [c["id"] for c in assistant["tool_calls"]] == ["c1", "c2"]
    assert assistant["tool_calls"][1]["function"] == {"name": "read_file", "arguments": '{"path": "a"}'}
    assert msgs[3] == {"role": "tool", "tool_call_id": "c1", "content": "1 image"}
    assert msgs[4] == {"role": "tool", "tool_call_id": "c2", "content": "A"}
    assert msgs[5]["role"] == "user"
    assert msgs[5]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    assert len(msgs) == 6
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object"}},
        }
    ]


def test_real_openai_gets_max_completion_tokens():
    class FakeURL:
        host = "api.openai.com"

    class FakeClient:
        base_url = FakeURL()

    provider = OpenAIProvider(MODEL, api_key="k", base_url=None)
    params = provider.build_params(request(max_tokens=100), FakeClient())
    assert params["max_completion_tokens"] == 100 and "max_tokens" not in params

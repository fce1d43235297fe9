"""Raw Anthropic SSE fixtures replayed through the real `anthropic` SDK (an `httpx.MockTransport`) into the adapter."""

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
from arreio.engine.providers.anthropic import AnthropicProvider

MODEL = "claude-sonnet-4-6"


def provider(server, session_id: str | None = None) -> AnthropicProvider:
    return AnthropicProvider(
        MODEL, api_key="test-key", base_url=server.url, session_id=session_id, transport=server.transport
    )


def request(**kw) -> ModelRequest:
    kw.setdefault("messages", [Message.user("hi")])
    return ModelRequest(model=f"anthropic/{MODEL}", **kw)


def replay(server, quirk: str, req: ModelRequest | None = None) -> list:
    server.push(Reply.stream("anthropic", quirk))
    return collect(provider(server), req or request())


def test_text_only_streams_deltas_and_ends_with_usage(wire):
    events = replay(wire, "text_only")
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["Hello", ", world."]
    assert events[-1] == Done(stop_reason="end_turn", usage=Usage(input_tokens=25, output_tokens=12))
    assert sum(isinstance(e, Done) for e in events) == 1
    seen = wire.seen[0]
    assert seen.path == "/v1/messages"
    assert "test-key" in seen.headers.get("x-api-key", "") + seen.headers.get("authorization", "")
    assert seen.headers.get("x-stainless-retry-count") == "0"
    assert seen.body["stream"] is True and seen.body["model"] == MODEL


def test_tool_call_args_assembled_from_partial_json(wire):
    events = replay(wire, "tool_call")
    calls = [e for e in events if isinstance(e, ToolCallDone)]
    assert calls == [ToolCallDone(id="toolu_01", name="read_file", arguments={"path": "README.md", "limit": 20})]
    assert events[0] == TextChunk(text="Reading it.")
    assert events[-1].stop_reason == "tool_use"


def test_parallel_tool_calls_keep_declared_order(wire):
    events = replay(wire, "parallel_tool_calls")
    calls = [e for e in events if isinstance(e, ToolCallDone)]
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("toolu_a", "read_file", {"path": "a.txt"}),
        ("toolu_b", "grep", {"pattern": "TODO"}),
        ("toolu_c", "list_dir", {"path": "."}),
    ]
    assert isinstance(events[-1], Done) and events[-1].stop_reason == "tool_use"


def test_tool_args_empty_string_then_braces_mean_no_arguments(wire):
    events = replay(wire, "tool_args_empty_then_braces")
    calls = [e for e in events if isinstance(e, ToolCallDone)]
    assert [(c.id, c.arguments) for c in calls] == [("toolu_e1", {}), ("toolu_e2", {})]


def test_thinking_streams_then_signature_on_the_final_chunk(wire):
    events = replay(wire, "thinking_signature")
    thinking = [e for e in events if isinstance(e, ThinkingChunk)]
    assert "".join(t.text for t in thinking) == "The user wants a file. I will read it."
    assert [t.signature for t in thinking[:-1]] == [None, None]
    assert thinking[-1].signature == "EqQBCkgIARABGAIiQL2sig0000base64signatureAAAA=="
    # the block closes before the text that follows it
    assert events.index(thinking[-1]) < events.index(TextChunk(text="Let me look."))
    assert events[-1].stop_reason == "tool_use"


def test_max_tokens_stop_drops_the_truncated_tool_call(wire):
    events = replay(wire, "max_tokens_stop")
    assert not [e for e in events if isinstance(e, ToolCallDone)]
    assert events[-1].stop_reason == "max_tokens"
    assert events[0] == TextChunk(text="A long answer that gets")


def test_cache_usage_fields_reported_on_done(wire):
    events = replay(wire, "cache_usage")
    assert events[-1].usage == Usage(input_tokens=12, output_tokens=7, cache_read_tokens=4096, cache_write_tokens=512)


def test_cache_control_breakpoints_on_the_stable_prefix(wire):
    history = [
        Message.user("read a.txt"),
        Message.assistant(
            [TextPart(text="ok"), ToolCallPart(id="t1", name="read_file", arguments={"path": "a"})], MODEL
        ),
        Message.tool_result(ToolResultPart(call_id="t1", name="read_file", content="A")),
    ]
    req = request(
        messages=history,
        system=[
            SystemBlock(name="identity", text="You are arreio."),
            SystemBlock(name="memory", text="MEMORY"),
            SystemBlock(name="clock", text="now: 12:00", stable=False),
        ],
        tools=[
            ToolSpec(name="read_file", description="read", input_schema={"type": "object"}),
            ToolSpec(name="grep", description="grep", input_schema={"type": "object"}),
        ],
    )
    replay(wire, "text_only", req)
    body = wire.seen[0].body
    assert [b.get("cache_control") for b in body["system"]] == [None, {"type": "ephemeral"}, None]
    assert body["system"][-1]["text"] == "now: 12:00"  # volatile last, outside the cached prefix
    assert [t.get("cache_control") for t in body["tools"]] == [None, {"type": "ephemeral"}]
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"][-1]["type"] == "tool_use"
    assert msgs[1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in msgs[2]["content"][0]
    assert msgs[2]["content"][0] == {"type": "tool_result", "tool_use_id": "t1", "content": "A"}


def test_tool_images_go_in_a_separate_user_message_after_the_results(wire):
    image = ImagePart(media_type="image/png", data="iVBORw0KGgo=")
    history = [
        Message.user("screenshot please"),
        Message.assistant([ToolCallPart(id="t1", name="screenshot"), ToolCallPart(id="t2", name="read_file")], MODEL),
        Message.tool_result(ToolResultPart(call_id="t1", name="screenshot", content="1 image", images=[image])),
        Message.tool_result(ToolResultPart(call_id="t2", name="read_file", content="", is_error=True)),
    ]
    replay(wire, "text_only", request(messages=history))
    msgs = wire.seen[0].body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "user"]
    results = msgs[2]["content"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result"]
    assert results[1]["is_error"] is True and results[1]["content"] == "(no output)"
    assert all(isinstance(b["content"], str) for b in results)  # no image inside a tool_result
    assert msgs[3]["content"][0]["text"] == "Images returned by screenshot (call t1):"
    assert msgs[3]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }


def test_thinking_replayed_verbatim_to_the_same_model_and_downgraded_for_another(wire):
    history = [
        Message.user("q1"),
        Message.assistant([ThinkingPart(thinking="mine", signature="sig-1"), TextPart(text="a1")], MODEL),
        Message.user("q2"),
        Message.assistant([ThinkingPart(thinking="theirs", signature="sig-x"), TextPart(text="a2")], "openai/gpt-5"),
        Message.user("q3"),
    ]
    replay(wire, "text_only", request(messages=history))
    msgs = wire.seen[0].body["messages"]
    assert msgs[1]["content"][0] == {"type": "thinking", "thinking": "mine", "signature": "sig-1"}
    assert msgs[3]["content"][0] == {"type": "text", "text": "<thinking>\ntheirs\n</thinking>"}
    assert all(b["type"] != "thinking" for b in msgs[3]["content"])


REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"


def test_thinking_config_goes_on_the_wire_and_no_temperature_is_sent(wire):
    replay(wire, "text_only", request(thinking=2048, temperature=0.2))
    body = wire.seen[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048} and "temperature" not in body
    replay(wire, "text_only", request(thinking="adaptive"))
    assert wire.seen[1].body["thinking"] == {"type": "adaptive"}
    events = replay(wire, "text_only", request(temperature=0.2))
    assert events[-1].stop_reason == "end_turn"  # the SDK's create() takes no temperature: not sent
    assert "thinking" not in wire.seen[2].body and "temperature" not in wire.seen[2].body


def test_a_redacted_thinking_block_streams_as_its_own_chunk(wire):
    events = replay(wire, "redacted_thinking_tool_call")
    thinking = [e for e in events if isinstance(e, ThinkingChunk)]
    assert [(t.signature is not None, t.redacted) for t in thinking if t.signature or t.redacted] == [
        (True, None),
        (False, REDACTED),
    ]
    assert "".join(t.text for t in thinking) == "The README will say what this is."  # nothing readable added
    assert isinstance(events[-2], ToolCallDone) and events[-1].stop_reason == "tool_use"


def test_redacted_thinking_goes_back_only_to_the_model_that_wrote_it(wire):
    history = [
        Message.user("q1"),
        Message.assistant([ThinkingPart(thinking="", redacted=REDACTED), TextPart(text="a1")], MODEL),
        Message.user("q2"),
        Message.assistant([ThinkingPart(thinking="", redacted="other"), TextPart(text="a2")], "openai/gpt-5"),
        Message.user("q3"),
    ]
    replay(wire, "text_only", request(messages=history))
    msgs = wire.seen[0].body["messages"]
    assert msgs[1]["content"][0] == {"type": "redacted_thinking", "data": REDACTED}
    assert [b["type"] for b in msgs[3]["content"]] == ["text"]  # nothing readable to carry over


def test_a_200_that_is_no_event_stream_says_what_came_and_is_not_retried(wire):
    # A proxy's or portal's page where the API was meant to be: it used to end as "stream ended before
    # the reply was complete (no stop reason)", retried, the page never named.
    wire.push(Reply(body=b"<!doctype html><html><title>Sign in to the Wi-Fi</title></html>", content_type="text/html"))
    events = collect(provider(wire), request())
    done = events[-1]
    assert isinstance(done, Done) and done.error is not None
    assert done.error.kind == "fatal"
    assert "text/html instead of an event stream" in done.error.message
    assert "Sign in to the Wi-Fi" in done.error.message
    assert done.error.message.startswith("anthropic: ")
    # The OpenAI hint ("often ending in /v1") would mislead: the SDK adds /v1/messages to Anthropic's base_url.
    assert "often ending in /v1" not in done.error.message and "without /v1" in done.error.message


def test_an_error_sent_as_json_with_a_200_is_classified_as_the_error(wire):
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    wire.push(Reply(body=body, content_type="application/json"))
    done = collect(provider(wire), request())[-1]
    assert done.error is not None and "Overloaded" in done.error.message
    assert done.error.kind == "retryable"

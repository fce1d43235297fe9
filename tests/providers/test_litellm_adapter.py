"""litellm through its OpenAI-compatible route against the local server: no network, real litellm."""

from __future__ import annotations

import os

import pytest
from provider_fakes import Reply, collect

from arreio.engine.core.messages import Message, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import ModelRequest, TextChunk, ToolCallDone, ToolSpec
from arreio.engine.providers.litellm import LiteLLMProvider

TOOLS = [ToolSpec(name="read_file", description="Read a file.", input_schema={"type": "object"})]


def provider(server) -> LiteLLMProvider:
    return LiteLLMProvider("openai/local-model", api_key="test-key", base_url=f"{server.url}/v1")


@pytest.mark.slow
def test_streamed_tool_call_round_through_litellm(server):
    server.push(Reply.stream("openai", "tool_call"), Reply.stream("openai", "text_only"))
    first = ModelRequest(model="litellm/openai/local-model", messages=[Message.user("read it")], tools=TOOLS)
    events = collect(provider(server), first)
    calls = [e for e in events if isinstance(e, ToolCallDone)]
    assert calls == [ToolCallDone(id="call_01", name="read_file", arguments={"path": "README.md", "limit": 20})]
    assert events[-1].stop_reason == "tool_use"
    assert events[-1].usage.input_tokens == 80 and events[-1].usage.output_tokens == 22

    history = [
        *first.messages,
        Message.assistant(
            [ToolCallPart(id=c.id, name=c.name, arguments=c.arguments) for c in calls], "litellm/openai/local-model"
        ),
        Message.tool_result(ToolResultPart(call_id="call_01", name="read_file", content="# README")),
    ]
    events = collect(provider(server), first.model_copy(update={"messages": history}))
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Hello, world."
    assert events[-1].stop_reason == "end_turn"

    assert [s.path for s in server.seen] == ["/v1/chat/completions", "/v1/chat/completions"]
    sent = server.seen[1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[2]["tool_call_id"] == "call_01"
    assert server.seen[0].body["model"] == "local-model"
    # litellm was imported offline: no price-map fetch, no tokenizer download
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert os.environ["LITELLM_OFFLINE_MODE"] == "true"


def test_litellm_faults_are_classified_without_its_own_retries(server):
    server.push(
        Reply.error(
            429,
            {"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}},
            {"retry-after": "2"},
        ),
        Reply.error(
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens.",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
        ),
        Reply.error(401, {"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}}),
    )
    request = ModelRequest(model="litellm/openai/local-model", messages=[Message.user("hi")])
    kinds = []
    for _ in range(3):
        done = collect(provider(server), request)[-1]
        kinds.append((done.error.kind, done.error.status))
    assert kinds == [("retryable", 429), ("context_overflow", 400), ("auth", 401)]
    assert len(server.seen) == 3, "litellm or the SDK under it retried on its own"


def test_claude_through_litellm_gets_prompt_cache_breakpoints(server):
    from arreio.engine.core.messages import TextPart
    from arreio.engine.core.model_io import SystemBlock

    server.push(Reply.stream("anthropic", "text_only"))
    claude = LiteLLMProvider("anthropic/claude-sonnet-4-5", api_key="test-key", base_url=server.url)
    history = [
        Message.user("first question"),
        Message.assistant([TextPart(text="first answer")], "litellm/anthropic/claude-sonnet-4-5"),
        Message.user("second question"),
    ]
    request = ModelRequest(
        model="litellm/anthropic/claude-sonnet-4-5",
        system=[
            SystemBlock(name="base", text="You are arreio.", stable=True),
            SystemBlock(name="clock", text="Now: Monday.", stable=False),
        ],
        messages=history,
        tools=TOOLS,
    )
    events = collect(claude, request)
    assert events[-1].stop_reason == "end_turn", events[-1]
    body = server.seen[0].body  # what reached the (fake) Anthropic Messages API
    assert server.seen[0].path.endswith("/v1/messages")
    assert body["system"] == [  # the stable prompt is cached; the clock line after it is not
        {"type": "text", "text": "You are arreio.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Now: Monday."},
    ]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    marked = [
        (m["role"], b["text"])
        for m in body["messages"]
        for b in m["content"]
        if isinstance(b, dict) and "cache_control" in b
    ]
    assert marked == [("assistant", "first answer")]  # the prefix the next call shares ends here


def test_other_models_through_litellm_get_no_cache_marks(server):
    server.push(Reply.stream("openai", "text_only"))
    collect(
        provider(server), ModelRequest(model="litellm/openai/local-model", messages=[Message.user("hi")], tools=TOOLS)
    )
    assert "cache_control" not in str(server.seen[0].body)


def test_claude_thinking_through_litellm_keeps_signed_and_redacted_blocks(server):
    from arreio.engine.core.messages import ThinkingPart
    from arreio.engine.core.model_io import ThinkingChunk

    server.push(Reply.stream("anthropic", "redacted_thinking_tool_call"), Reply.stream("anthropic", "text_only"))
    model = "anthropic/claude-sonnet-4-5"
    claude = LiteLLMProvider(model, api_key="test-key", base_url=server.url)
    first = ModelRequest(model=f"litellm/{model}", messages=[Message.user("read it")], tools=TOOLS, thinking=2048)
    events = collect(claude, first)
    assert server.seen[0].body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    thinking = [e for e in events if isinstance(e, ThinkingChunk)]
    assert "".join(t.text for t in thinking) == "The README will say what this is."  # counted once
    closing = [(t.signature, t.redacted) for t in thinking if t.signature or t.redacted]
    assert closing == [
        ("EqQBCkgIARABGAIiQL2sig1111base64signatureBBBB==", None),
        (None, "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"),
    ]

    # the next turn: the model's own blocks go back verbatim, before its tool call
    turn = Message.assistant(
        [
            ThinkingPart(thinking="The README will say what this is.", signature=closing[0][0]),
            ThinkingPart(thinking="", redacted=closing[1][1]),
            ToolCallPart(id="toolu_01", name="read_file", arguments={"path": "README.md"}),
        ],
        f"litellm/{model}",
    )
    history = [
        *first.messages,
        turn,
        Message.tool_result(ToolResultPart(call_id="toolu_01", name="read_file", content="# R")),
    ]
    collect(claude, first.model_copy(update={"messages": history}))
    assistant = server.seen[1].body["messages"][1]
    assert [b["type"] for b in assistant["content"]] == ["thinking", "redacted_thinking", "tool_use"]
    assert assistant["content"][0]["signature"] == closing[0][0]


def test_a_200_that_is_no_model_reply_is_a_retryable_failure_not_an_empty_answer(server):
    """litellm ends a 200 that holds no event stream (an error page; `{"error": …}` while a model
    loads) as a finished reply, with nothing in it: the run exited 0 with an empty answer. On the
    OpenAI route the tap sees what came and names it; elsewhere nothing at all (no text, no token
    count: usage is asked for) is a retryable failure (the next test)."""
    server.push(
        Reply(body=b"<html>502 Bad Gateway</html>", content_type="text/html"),
        Reply(
            body=b'{"error": {"message": "model is loading", "type": "server_error"}}', content_type="application/json"
        ),
        Reply.stream("openai", "text_only"),
    )
    request = ModelRequest(model="litellm/openai/local-model", messages=[Message.user("hi")])
    page = collect(provider(server), request)[-1]  # named, with its start; not retried (as the OpenAI adapter)
    assert page.stop_reason == "error" and page.error.kind == "fatal", page
    assert "text/html instead of an event stream" in page.error.message and "502 Bad Gateway" in page.error.message
    loading = collect(provider(server), request)[-1]  # the server's error, classified: a model loading is retried
    assert loading.stop_reason == "error" and loading.error.kind == "retryable", loading
    assert "model is loading" in loading.error.message
    events = collect(provider(server), request)  # a real reply after them is read as before
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Hello, world."
    assert events[-1].stop_reason == "end_turn" and events[-1].error is None


def test_an_sse_error_line_reaches_the_user_through_litellm(server):
    # llama.cpp's server reports a failure after the 200 as `error: {...}` then `data: [DONE]`. litellm
    # (and the SDK under it) drop the line: the reply looked cut, was retried, and the cause was never shown.
    start = (
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,'
        b'"delta":{"role":"assistant","content":null},"finish_reason":null}]}\n\n'
    )
    said = (
        b'{"code":400,"message":"the request exceeds the available context size, try increasing it",'
        b'"type":"exceed_context_size_error"}'
    )
    server.push(Reply(body=start + b"error: " + said + b"\n\ndata: [DONE]\n\n"))
    request = ModelRequest(model="litellm/openai/local-model", messages=[Message.user("hi")])
    done = collect(provider(server), request)[-1]
    assert done.error is not None
    assert "exceeds the available context size" in done.error.message
    assert done.error.kind == "context_overflow"  # compact and retry once, not six blind retries
    assert done.error.message.startswith("litellm: ")


class _NothingCame:
    """litellm on a route with no tap (ollama, a hosted vendor) as it answers a 200 page: a finished
    stream with no chunk in it."""

    async def acompletion(self, **_: object):
        async def chunks():
            return
            yield  # an async generator that yields nothing

        return chunks()


def test_elsewhere_nothing_at_all_is_a_retryable_failure_not_an_empty_answer():
    provider = LiteLLMProvider("ollama/qwen3", api_key=None, base_url=None, client=_NothingCame())
    done = collect(provider, ModelRequest(model="litellm/ollama/qwen3", messages=[Message.user("hi")]))[-1]
    assert done.stop_reason == "error" and done.error.kind == "retryable", done
    assert "not a model's reply" in done.error.message


def test_two_streams_on_one_provider_read_their_own_error_lines(server):
    # A sub-agent on the same model shares its parent's provider, and may stream beside it: the error
    # line one server reply held must end that stream, not the other one.
    import asyncio

    said = b'{"code":500,"message":"the slot crashed","type":"server_error"}'
    start = (
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,'
        b'"delta":{"role":"assistant","content":null},"finish_reason":null}]}\n\n'
    )
    server.push(Reply(body=start + b"error: " + said + b"\n\ndata: [DONE]\n\n"), Reply.stream("openai", "text_only"))
    shared = provider(server)
    request = ModelRequest(model="litellm/openai/local-model", messages=[Message.user("hi")])

    async def both() -> list[list]:
        async def one() -> list:
            return [event async for event in shared.stream(request)]

        return list(await asyncio.gather(one(), one()))

    ends = sorted((events[-1] for events in asyncio.run(both())), key=lambda done: done.error is None)
    assert ends[0].error is not None and "the slot crashed" in ends[0].error.message
    assert ends[1].error is None and ends[1].stop_reason == "end_turn"

"""Recorded Responses API SSE streams replayed through the real `openai` SDK (local server) into the
adapter: text, tool calls, reasoning + tool call (replayed to its own model, downgraded for another),
refusal, incomplete at max_output_tokens, errors mid-stream and before it."""

from __future__ import annotations

import random

import pytest
from provider_fakes import Reply, collect

from arreio.engine.core.config import OpenAISettings, RetrySettings
from arreio.engine.core.messages import ImagePart, Message, TextPart, ToolResultPart
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
from arreio.engine.loop.reply import fold
from arreio.engine.providers import anthropic
from arreio.engine.providers.openai import OpenAIProvider, is_openai_host
from arreio.engine.providers.openai_responses import ResponsesOptions, read_token
from arreio.engine.providers.registry import make_provider
from arreio.engine.providers.retry import decide_retry

MODEL = "gpt-5"
ENC = "gAAAAABpLtG0encrypted-reasoning-state-0001AAAA=="
FOLDER = "openai_responses"


def provider(server, model: str = MODEL, **kw) -> OpenAIProvider:
    kw.setdefault("session_id", "sess-1")
    return OpenAIProvider(
        model, api="responses", api_key="test-key", base_url=f"{server.url}/v1", transport=server.transport, **kw
    )


def request(**kw) -> ModelRequest:
    kw.setdefault("messages", [Message.user("hi")])
    return ModelRequest(model=f"openai/{MODEL}", **kw)


def replay(server, quirk: str, req: ModelRequest | None = None, **kw) -> list:
    server.push(Reply.stream(FOLDER, quirk))
    return collect(provider(server, **kw), req or request())


def test_text_streams_deltas_and_the_request_is_stateless_with_encrypted_reasoning(wire):
    req = request(
        system=[SystemBlock(name="clock", text="now", stable=False), SystemBlock(name="id", text="You are arreio.")]
    )
    events = replay(wire, "text", req)
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["Hello", ", world."]
    assert events[-1] == Done(stop_reason="end_turn", usage=Usage(input_tokens=30, output_tokens=5))
    seen = wire.seen[0]
    assert seen.path == "/v1/responses"
    assert seen.headers["authorization"] == "Bearer test-key"
    assert seen.headers.get("x-stainless-retry-count") == "0"  # the harness owns retries
    body = seen.body
    assert body["stream"] is True and body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"summary": "auto"}
    assert body["prompt_cache_key"] == "sess-1"
    assert body["max_output_tokens"] == 8192
    assert body["instructions"] == "You are arreio.\n\nnow"  # stable before volatile
    assert body["input"] == [{"role": "user", "content": "hi"}]
    assert "messages" not in body and "max_tokens" not in body


def test_tool_call_arguments_and_stop_reason(wire):
    events = replay(wire, "tool_call")
    assert events[0] == TextChunk(text="Reading it.")
    calls = [e for e in events if isinstance(e, ToolCallDone)]
    assert calls == [ToolCallDone(id="call_01", name="read_file", arguments={"path": "README.md", "limit": 20})]
    assert events[-1].stop_reason == "tool_use"
    assert events[-1].usage == Usage(input_tokens=80, output_tokens=22)


def test_parallel_calls_keep_declared_order_and_empty_arguments_mean_none(wire):
    events = replay(wire, "parallel_tool_calls")
    calls = [(e.id, e.name, e.arguments) for e in events if isinstance(e, ToolCallDone)]
    assert calls == [
        ("call_a", "read_file", {"path": "a.txt"}),
        ("call_b", "grep", {"pattern": "TODO"}),
        ("call_c", "list_dir", {}),
    ]


def _reasoning_reply(server):
    events = replay(server, "reasoning_tool_call")
    return events, fold(events)


def test_reasoning_summary_streams_as_thinking_and_the_item_is_kept_signed(wire):
    events, reply = _reasoning_reply(wire)
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingChunk))
    assert thinking == (
        "**Finding the file**\n\nThe user wants README.md; I should read it first.\n\n**Planning**\n\nThen summarise."
    )
    block = reply.parts[0]
    assert block.thinking == thinking
    assert read_token(block.signature) == {"type": "openai_reasoning", "id": "rs_01", "encrypted_content": ENC}
    assert [c.id for c in reply.calls] == ["call_01"] and reply.done.stop_reason == "tool_use"
    # cached input is split out of input_tokens (Anthropic's meaning, which pricing relies on)
    assert reply.done.usage == Usage(input_tokens=392, output_tokens=180, cache_read_tokens=4608)


def _history(reply, model: str) -> list[Message]:
    return [
        Message.user("summarise the README"),
        Message.assistant(reply.parts, model=model),
        Message.tool_result(ToolResultPart(call_id="call_01", name="read_file", content="# Demo")),
    ]


def test_reasoning_is_replayed_verbatim_to_the_model_that_wrote_it(wire):
    _, reply = _reasoning_reply(wire)
    replay(wire, "text", request(messages=_history(reply, "openai/gpt-5")))
    items = wire.seen[1].body["input"]
    assert items[0] == {"role": "user", "content": "summarise the README"}
    assert items[1]["type"] == "reasoning" and items[1]["id"] == "rs_01" and items[1]["encrypted_content"] == ENC
    assert items[1]["summary"][0]["type"] == "summary_text" and "Then summarise." in items[1]["summary"][0]["text"]
    assert items[2] == {
        "type": "function_call",
        "call_id": "call_01",
        "name": "read_file",
        "arguments": '{"path": "README.md"}',
    }
    assert items[3] == {"type": "function_call_output", "call_id": "call_01", "output": "# Demo"}
    assert len(items) == 4


def test_reasoning_of_another_model_becomes_text_and_is_never_sent_as_an_item(wire):
    _, reply = _reasoning_reply(wire)
    wire.push(Reply.stream(FOLDER, "text"))
    collect(provider(wire, model="o3"), request(messages=_history(reply, "openai/gpt-5")))
    items = wire.seen[1].body["input"]
    assert not [i for i in items if i.get("type") == "reasoning"]
    assert ENC not in str(items)
    assert items[1]["role"] == "assistant" and items[1]["content"].startswith("<thinking>\n**Finding the file**")
    assert items[2]["type"] == "function_call" and items[3]["type"] == "function_call_output"
    # the same history to Claude: text, never a thinking block carrying OpenAI's token
    params = anthropic.build_params(
        ModelRequest(model="anthropic/claude-sonnet-4-5", messages=_history(reply, "openai/gpt-5")), "claude-sonnet-4-5"
    )
    blocks = params["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["text", "tool_use"] and ENC not in str(params)


def test_refusal_is_text_with_a_refusal_stop(wire):
    events = replay(wire, "refusal")
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "I can't help with that."
    assert events[-1].stop_reason == "refusal" and events[-1].error is None


def test_incomplete_at_max_output_tokens_keeps_the_text_and_drops_the_cut_call(wire):
    events = replay(wire, "incomplete_max_output_tokens")
    assert not [e for e in events if isinstance(e, ToolCallDone)]
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["Writing the file now."]
    assert events[-1] == Done(stop_reason="max_tokens", usage=Usage(input_tokens=300, output_tokens=8192))


def _error_of(events) -> object:
    done = events[-1]
    assert isinstance(done, Done) and done.stop_reason == "error"
    return done.error


def test_an_error_event_mid_stream_is_a_retryable_failure(wire):
    error = _error_of(replay(wire, "error_mid_stream"))
    assert error.kind == "retryable" and "server_error" in error.message and error.message.startswith("openai:")
    assert decide_retry(error, 1, RetrySettings(), random.Random(0)).retry


def test_response_failed_with_a_rate_limit_is_retryable(wire):
    error = _error_of(replay(wire, "failed_rate_limit"))
    assert error.kind == "retryable" and "rate_limit_exceeded" in error.message


def test_a_stream_without_its_terminal_event_is_a_cut(wire):
    error = _error_of(replay(wire, "stream_cut_no_completed"))
    assert error.kind == "retryable" and "stream ended before the reply was complete" in error.message


def test_a_connection_dropped_mid_body_is_retryable(server):
    body = Reply.stream(FOLDER, "tool_call").body
    server.push(Reply(body=body, cut_after=len(body) // 2))
    error = _error_of(collect(provider(server), request()))
    assert error.kind == "retryable"


@pytest.mark.parametrize(
    "status,body,headers,kind",
    [
        (
            429,
            {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}},
            {"retry-after": "7"},
            "retryable",
        ),
        (500, {"error": {"message": "The server had an error", "type": "server_error", "code": None}}, {}, "retryable"),
        (
            401,
            {"error": {"message": "Incorrect API key", "type": "invalid_request_error", "code": "invalid_api_key"}},
            {},
            "auth",
        ),
        (
            400,
            {
                "error": {
                    "message": "Your input exceeds the context window",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
            {},
            "context_overflow",
        ),
        (
            400,
            {
                "error": {
                    "message": "Unsupported parameter: 'temperature'",
                    "type": "invalid_request_error",
                    "code": None,
                }
            },
            {},
            "fatal",
        ),
    ],
)
def test_http_errors_map_to_the_retry_classes(wire, status, body, headers, kind):
    wire.push(Reply.error(status, body, headers))
    error = _error_of(collect(provider(wire), request()))
    assert error.kind == kind and error.status == status
    if headers:
        assert error.retry_after == 7.0


def test_a_model_that_does_not_reason_gets_no_reasoning_parameters(wire):
    replay(wire, "text", model="gpt-4.1")
    body = wire.seen[0].body
    assert "include" not in body and "reasoning" not in body and body["store"] is False


def test_reasoning_options_reach_the_request(wire):
    wire.push(Reply.stream(FOLDER, "text"))
    collect(provider(wire, responses=ResponsesOptions(reasoning_summary="off", reasoning_effort="high")), request())
    assert wire.seen[0].body["reasoning"] == {"effort": "high"}


def test_tools_results_and_images_in_the_responses_shape(wire):
    image = ImagePart(media_type="image/png", data="iVBORw0KGgo=")
    history = [
        Message.user("look"),
        Message.assistant([TextPart(text="Looking.")], model="openai/gpt-5"),
        Message.user("again"),
    ]
    from arreio.engine.core.messages import ToolCallPart

    history += [
        Message.assistant([ToolCallPart(id="c1", name="screenshot")], model="openai/gpt-5"),
        Message.tool_result(ToolResultPart(call_id="c1", name="screenshot", content="", images=[image])),
    ]
    tools = [ToolSpec(name="read_file", description="Read a file.", input_schema={"type": "object"})]
    replay(wire, "text", request(messages=history, tools=tools))
    body = wire.seen[0].body
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object"},
            "strict": False,
        }
    ]
    items = body["input"]
    assert items[1] == {"role": "assistant", "content": "Looking."}
    assert items[3] == {"type": "function_call", "call_id": "c1", "name": "screenshot", "arguments": "{}"}
    assert items[4] == {"type": "function_call_output", "call_id": "c1", "output": "(no output)"}
    assert items[5]["role"] == "user"
    assert items[5]["content"][0] == {"type": "input_text", "text": "Images returned by screenshot (call c1):"}
    assert items[5]["content"][1] == {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}


def test_auto_speaks_chat_completions_to_a_compatible_server_and_responses_to_openai(server):
    server.push(Reply.stream("openai", "text_only"))
    auto = OpenAIProvider(MODEL, api_key="k", base_url=f"{server.url}/v1")
    events = collect(auto, request())
    assert server.seen[0].path == "/v1/chat/completions" and events[-1].stop_reason == "end_turn"

    class URL:
        host = "api.openai.com"

    class Client:
        base_url = URL()

    assert is_openai_host(Client()) and auto.speaks_responses(Client())
    assert not OpenAIProvider(MODEL, api="chat", api_key="k", base_url=None).speaks_responses(Client())


def test_the_config_section_reaches_the_adapter_through_the_factory(server):
    server.push(Reply.stream(FOLDER, "text"))
    made = make_provider(
        "openai/gpt-5",
        env={"OPENAI_API_KEY": "k"},
        base_url=f"{server.url}/v1",
        session_id="s",
        openai=OpenAISettings(api="responses", reasoning_summary="detailed"),
    )
    collect(made, request())
    assert server.seen[0].path == "/v1/responses" and server.seen[0].body["reasoning"] == {"summary": "detailed"}


def test_a_full_run_keeps_the_reasoning_between_tool_calls(tmp_path, monkeypatch, server):
    """`arreio run` on gpt-5 through the Responses API: the reasoning summary streams as thinking, the
    encrypted item is saved with the session and sent back with the tool result on the next call."""
    import json

    from typer.testing import CliRunner

    from arreio.cli.app import app
    from arreio.engine.session.file import Session

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("ARREIO_BASE_URL", server.url)
    (tmp_path / ".arreio").mkdir()
    (tmp_path / ".arreio" / "config.yaml").write_text("openai:\n  api: responses\n")
    (tmp_path / "README.md").write_text("# Demo\n")
    server.push(Reply.stream(FOLDER, "reasoning_tool_call"), Reply.stream(FOLDER, "text"))
    result = CliRunner().invoke(
        app, ["run", "Summarise the README", "--model", "openai/gpt-5", "--json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert "".join(e["text"] for e in events if e["type"] == "thinking_delta").startswith("**Finding the file**")
    assert [e["name"] for e in events if e["type"] == "tool_end"] == ["read_file"]
    second = server.seen[1].body["input"]
    kinds = [i.get("type") or i.get("role") for i in second]
    assert kinds == ["user", "reasoning", "function_call", "function_call_output"]
    assert second[1]["encrypted_content"] == ENC and second[2]["call_id"] == second[3]["call_id"] == "call_01"
    assert server.seen[1].body["prompt_cache_key"] == events[0]["session_id"]
    session, _ = Session.open(tmp_path / ".arreio" / "sessions" / f"{events[0]['session_id']}.jsonl", repair=False)
    kept = session.messages[1].parts[0]
    assert read_token(kept.signature)["encrypted_content"] == ENC and session.messages[1].model == "openai/gpt-5"


def test_an_error_event_in_the_wrapped_shape_is_classified_by_its_body(wire):
    """Proxies send `{"type": "error", "error": {...}}`: the SDK raises on it; the body still decides."""
    error = _error_of(replay(wire, "error_wrapped_overflow"))
    assert error.kind == "context_overflow" and "context window" in error.message

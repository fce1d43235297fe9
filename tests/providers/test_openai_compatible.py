"""OpenAI-compatible servers (llama.cpp, LM Studio, Ollama, vLLM, Groq, OpenRouter) and the ways their
Chat Completions streams differ from OpenAI's: raw SSE fixtures replayed through the real `openai`
SDK into the adapter, and whole `arreio run`s (a real process) against the local server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from provider_fakes import Reply, collect, sse

from arreio.engine.core.messages import Message
from arreio.engine.core.model_io import Done, ModelRequest, TextChunk, ThinkingChunk, ToolCallDone, Usage
from arreio.engine.providers.openai import OpenAIProvider
from arreio.engine.providers.think_tags import ThinkTags
from arreio.engine.providers.wire import INVALID_ARGS_KEY
from tests.conftest import run_cli

REQUEST = ModelRequest(model="openai/local", messages=[Message.user("hi")])
CONTEXT_FULL = "the request exceeds the available context size"


def provider(server) -> OpenAIProvider:
    return OpenAIProvider(
        "local", api_key="test-key", base_url=f"{server.url}/v1", session_id="sess-1", transport=server.transport
    )


def replay(server, *replies: Reply) -> list:
    server.push(*replies)
    return collect(provider(server), REQUEST)


def calls(events: list) -> list[tuple[str, str, dict]]:
    return [(e.id, e.name, e.arguments) for e in events if isinstance(e, ToolCallDone)]


# -- the stream --------------------------------------------------------------------------------


def test_llamacpp_error_line_is_the_replys_end_not_a_cut(wire):
    # llama.cpp's wire (2025 builds) says `error: {...}` then `data: [DONE]`; the SDK drops the line
    events = replay(wire, Reply.stream("openai", "llamacpp_error_line"))
    done = events[-1]
    assert done.stop_reason == "error" and done.error.kind == "context_overflow"
    assert CONTEXT_FULL in done.error.message and "no finish_reason" not in done.error.message


def test_done_without_finish_reason_is_a_whole_reply(wire):
    events = replay(wire, Reply.stream("openai", "no_finish_reason_done"))
    assert calls(events) == [("call_nf", "read_file", {"path": "README.md"})]
    assert events[-1] == Done(stop_reason="tool_use", usage=Usage(estimated=True))  # it sent no counts


def test_done_with_no_newline_after_it_still_counts(wire):
    body = sse("openai", "no_finish_reason_done").rstrip(b"\n")
    events = replay(wire, Reply(body=body))
    assert events[-1] == Done(stop_reason="tool_use", usage=Usage(estimated=True))  # it sent no counts


def test_no_finish_reason_and_no_done_is_still_a_cut(wire):
    events = replay(wire, Reply.stream("openai", "stream_cut_no_finish"))
    assert events[-1].stop_reason == "error" and events[-1].error.kind == "retryable"


def test_an_aborted_reply_is_not_a_whole_one(wire):
    # vLLM: finish_reason "abort" then data: [DONE]; the half answer was taken as the run's answer
    events = replay(wire, Reply.stream("openai", "vllm_abort"))
    assert events[-1].stop_reason == "error" and events[-1].error.kind == "retryable"
    assert "'abort'" in events[-1].error.message


def test_whole_calls_with_neither_index_nor_id_stay_apart(wire):
    events = replay(wire, Reply.stream("openai", "calls_without_index_or_id"))
    assert [(name, args) for _, name, args in calls(events)] == [("read_file", {"path": "a.txt"}), ("list_dir", {})]
    assert len({call_id for call_id, _, _ in calls(events)}) == 2


def test_arguments_sent_as_an_object_are_the_arguments(wire):
    events = replay(wire, Reply.stream("openai", "tool_args_as_object"))
    assert calls(events) == [("call_obj", "read_file", {"path": "café.md"})]


def test_deepseek_reasoning_and_its_cache_hits(wire):
    events = replay(wire, Reply.stream("openai", "deepseek_reasoning_tool_call"))
    assert "".join(e.text for e in events if isinstance(e, ThinkingChunk)) == "The README says what it is."
    assert calls(events) == [("call_00_ds", "read_file", {"path": "README.md"})]
    assert events[-1].usage == Usage(input_tokens=44, output_tokens=40, cache_read_tokens=256)


def test_think_tags_opening_the_content_are_thinking(wire):
    events = replay(wire, Reply.stream("openai", "think_tags_in_content"))
    assert (
        "".join(e.text for e in events if isinstance(e, ThinkingChunk))
        == "\nI have written summary.md and the tests pass."
    )
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Hello, world. A <think> tag later is text."


@pytest.mark.parametrize(
    "content",
    [
        "<think>a thought</think>\n\nThe answer.",
        "\n<think>\na thought\n</think>The answer.",
        "The answer, <think>not a thought</think>.",
        "  The answer.",
        "<think>a thought cut off",
        "<thi",
    ],
)
def test_think_tags_split_anywhere(content):
    def run(pieces: list[str]) -> tuple[str, str]:
        tags, events = ThinkTags(), []
        for piece in pieces:
            events += tags.feed(piece)
        events += tags.end()
        return (
            "".join(e.text for e in events if isinstance(e, ThinkingChunk)),
            "".join(e.text for e in events if isinstance(e, TextChunk)),
        )

    whole = run([content])
    assert all(
        run([content[:i], content[i:j], content[j:]]) == whole
        for i in range(len(content) + 1)
        for j in range(i, len(content) + 1)
    )
    if content.lstrip().startswith("<think>"):
        assert "a thought" in whole[0] and "<think>" not in whole[1] and "thought" not in whole[1]
    else:
        assert whole == ("", content)


def test_magistral_content_chunks_thinking_then_text(wire):
    # Mistral's reasoning models stream content as typed chunks; the str join failed every call
    events = replay(wire, Reply.stream("openai", "magistral_content_chunks"))
    assert "".join(e.text for e in events if isinstance(e, ThinkingChunk)) == "It's a greeting, I should return one."
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Hello, world."
    assert events[-1] == Done(stop_reason="end_turn", usage=Usage(input_tokens=12, output_tokens=28))


def test_truncated_arguments_are_kept_for_the_model_to_see(wire):
    events = replay(wire, Reply.stream("openai", "truncated_tool_args"))
    assert calls(events) == [("call_bad", "read_file", {INVALID_ARGS_KEY: '{"path": "READ'})]


@pytest.mark.parametrize("chunk_bytes", [None, 1, 7])
def test_keepalives_reasoning_and_ids_on_every_delta_split_anywhere(wire, chunk_bytes):
    # OpenRouter's comment lines, a `reasoning` delta, the id repeated on every delta with no index,
    # arguments split inside a \\u escape, "stop" after a call, usage only on the last chunk; and the
    # same bytes cut into pieces that split UTF-8 characters
    body = sse("openai", "keepalive_reasoning_id_every_delta")
    events = replay(wire, Reply(body=body, chunk_bytes=chunk_bytes))
    assert [e.text for e in events if isinstance(e, ThinkingChunk)] == ["Look first. "]
    assert calls(events) == [("call_r1", "read_file", {"path": "café ☕.md"})]
    assert events[-1].stop_reason == "tool_use" and events[-1].usage.input_tokens == 40


@pytest.mark.parametrize("chunk_bytes", [None, 1, 5])
def test_events_without_data_do_not_end_the_stream(wire, chunk_bytes):
    # a gateway's `retry:` directive, an `id:` or `event: ping` alone, an empty `data:`: the SDK parsed
    # "" as JSON and every request failed as "malformed stream data"
    events = replay(wire, Reply(body=sse("openai", "meta_only_events"), chunk_bytes=chunk_bytes))
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["Hello", ", world."]
    assert events[-1] == Done(stop_reason="end_turn", usage=Usage(estimated=True))  # it sent no counts


def test_openrouter_error_chunk_inside_a_200_is_retryable(wire):
    events = replay(wire, Reply.stream("openai", "openrouter_error_chunk"))
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["Partial"]
    assert events[-1].error.kind == "retryable" and "Provider disconnected" in events[-1].error.message


@pytest.mark.parametrize(
    "content_type, body, kind, said",
    [
        (
            "application/json",
            b'{"id": "c", "object": "chat.completion", "choices": []}',
            "fatal",
            "instead of an event stream",
        ),
        ("text/html", b"<!doctype html><html><title>Open WebUI</title></html>", "fatal", "<!doctype html>"),
        (
            "application/json",
            b'{"error": {"message": "model is loading", "type": "server_error"}}',
            "retryable",
            "model is loading",
        ),
    ],
)
def test_a_200_that_is_no_event_stream_says_what_came(wire, content_type, body, kind, said):
    # was: "stream ended before the reply was complete (no finish_reason)", six times
    events = replay(wire, Reply(body=body, content_type=content_type))
    assert events[-1].error.kind == kind and said in events[-1].error.message
    assert "no finish_reason" not in events[-1].error.message


@pytest.mark.parametrize(
    "body",
    [
        {
            "error": {
                "code": 400,
                "message": "request (4476 tokens) exceeds the available context size (4096 tokens)",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 4476,
                "n_ctx": 4096,
            }
        },  # llama.cpp
        {
            "error": "Trying to keep the first 5012 tokens when context the overflows. "
            "However, the model is loaded with context length of only 4096 tokens, which is not enough."
        },  # LM Studio
    ],
)
def test_local_servers_context_full_is_an_overflow(wire, body):
    events = replay(wire, Reply.error(400, body))
    assert events[-1].error.kind == "context_overflow"


@pytest.mark.parametrize(
    "status, body",
    [
        (
            400,
            {"error": {"message": "property 'prompt_cache_key' is unsupported", "type": "invalid_request_error"}},
        ),  # Groq
        (
            422,
            {
                "message": "body.prompt_cache_key: property 'body.prompt_cache_key' is unsupported",
                "type": "invalid_request_error",
                "param": "validation_error",
                "code": "wrong_api_format",
            },
        ),  # Cerebras
    ],
)
def test_a_refused_cache_key_is_dropped_and_the_call_made_again(wire, status, body):
    wire.push(Reply.error(status, body), Reply.stream("openai", "text_only"), Reply.stream("openai", "text_only"))
    model = provider(wire)
    events = collect(model, REQUEST)
    assert events[-1].stop_reason == "end_turn"
    assert [("prompt_cache_key" in s.body) for s in wire.seen] == [True, False]
    collect(model, REQUEST)  # remembered: the next call does not ask to be refused again
    assert len(wire.seen) == 3 and "prompt_cache_key" not in wire.seen[2].body


def _vllm_too_long(messages: int) -> Reply:
    return Reply.error(
        400,
        {
            "object": "error",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
            "message": f"This model's maximum context length is 4096 tokens. However, you requested {messages + 8192} "
            f"tokens ({messages} in the messages, 8192 in the completion). Please reduce the length of "
            "the messages or completion.",
        },
    )


def test_a_reply_cap_larger_than_the_window_leaves_is_cut_to_fit(wire):
    # vLLM with max_model_len 4096 refused every call (max_tokens 8192) as a context overflow
    events = replay(wire, _vllm_too_long(150), Reply.stream("openai", "text_only"))
    assert events[-1].stop_reason == "end_turn"
    assert [s.body["max_tokens"] for s in wire.seen] == [8192, 4096 - 150]


def test_messages_that_fill_the_window_are_still_an_overflow(wire):
    events = replay(wire, _vllm_too_long(4000), Reply.stream("openai", "text_only"))
    assert events[-1].error.kind == "context_overflow" and len(wire.seen) == 1


def test_a_404_that_is_no_api_error_names_the_address(wire):
    # OPENAI_BASE_URL=http://localhost:11434 (no /v1): Ollama's router says "404 page not found"
    events = replay(wire, Reply(status=404, body=b"404 page not found", content_type="text/plain"))
    assert events[-1].error.kind == "fatal"
    assert f"POST {wire.url}/v1/chat/completions" in events[-1].error.message and "/v1" in events[-1].error.message


def test_a_404_from_the_api_is_left_as_it_said(wire):
    body = {"error": {"message": 'model "qwen3" not found, try pulling it first', "type": "not_found_error"}}
    events = replay(wire, Reply.error(404, body))
    assert "try pulling it first" in events[-1].error.message and "base_url" not in events[-1].error.message


def test_max_tokens_refused_for_max_completion_tokens(wire):
    # Azure (not OpenAI's host, so max_tokens was sent) with a reasoning model
    said = {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    }
    events = replay(wire, Reply.error(400, said), Reply.stream("openai", "text_only"))
    assert events[-1].stop_reason == "end_turn"
    assert [("max_tokens" in s.body, s.body.get("max_completion_tokens")) for s in wire.seen] == [
        (True, None),
        (False, 8192),
    ]


def test_a_refusal_that_names_no_optional_field_is_not_repeated(wire):
    events = replay(
        wire, Reply.error(400, {"error": {"message": "tools: unknown field", "type": "invalid_request_error"}})
    )
    assert events[-1].error.kind == "fatal" and len(wire.seen) == 1


# -- whole runs ----------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, server) -> tuple[Path, dict[str, str]]:
    (tmp_path / "README.md").write_text("# Demo\n\nA tiny project.\n")
    (tmp_path / ".arreio").mkdir()
    (tmp_path / ".arreio" / "config.yaml").write_text("retry:\n  base_delay_s: 0.01\n  max_delay_s: 0.05\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "ARREIO_"))}
    env.update(HOME=str(tmp_path / "home"), OPENAI_API_KEY="test", OPENAI_BASE_URL=f"{server.url}/v1")
    return tmp_path, env


def arreio_run(project: tuple[Path, dict[str, str]]) -> tuple[int, list[dict], str]:
    work, env = project
    done = run_cli(
        work, env, "run", "--model", "openai/qwen2.5-coder:7b", "--json", "Read README.md and say what it is."
    )
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")], done.stderr


def test_run_llamacpp_context_full_says_so_at_once(project, server):
    server.push(Reply.stream("openai", "tool_call"), *[Reply.stream("openai", "llamacpp_error_line")] * 6)
    code, events, stderr = arreio_run(project)
    assert code == 1 and CONTEXT_FULL in stderr and "context window" in stderr
    assert not [e for e in events if e["type"] == "retry"]  # one refusal, not six retries of a "cut"


def test_run_with_groq_refusing_the_cache_key(project, server):
    refusal = Reply.error(
        400, {"error": {"message": "property 'prompt_cache_key' is unsupported", "type": "invalid_request_error"}}
    )
    server.push(refusal, Reply.stream("openai", "tool_call"), Reply.stream("openai", "text_only"))
    code, events, stderr = arreio_run(project)
    assert code == 0, stderr
    assert events[-1]["final_text"] == "Hello, world." and len(server.seen) == 3


def test_run_model_is_told_its_arguments_were_not_json(project, server):
    server.push(Reply.stream("openai", "truncated_tool_args"), Reply.stream("openai", "text_only"))
    code, _, stderr = arreio_run(project)
    assert code == 0, stderr
    result = [m for m in server.seen[1].body["messages"] if m["role"] == "tool"][0]["content"]
    assert "not a valid JSON object" in result and '{"path": "READ' in result
    assert INVALID_ARGS_KEY not in result


DEEPSEEK_REFUSAL = {
    "error": {
        "message": "Missing `reasoning_content` field in the assistant message at message index 2. "
        "For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }
}


def test_run_deepseek_thinking_gets_its_reasoning_back_when_it_asks(project, server):
    server.push(
        Reply.stream("openai", "deepseek_reasoning_tool_call"),
        Reply.error(400, DEEPSEEK_REFUSAL),
        Reply.stream("openai", "text_only"),
    )
    code, events, stderr = arreio_run(project)
    assert code == 0, stderr
    first, again = ([m for m in server.seen[i].body["messages"] if m["role"] == "assistant"] for i in (1, 2))
    assert "reasoning_content" not in first[0]  # nothing extra is sent to a server that did not ask
    assert again[0]["reasoning_content"] == "The README says what it is." and again[0]["tool_calls"]


def test_run_a_thought_in_think_tags_is_not_the_answer(project, server):
    # the promise gate read "I have written summary.md" in the thought and failed the run (exit 1)
    server.push(Reply.stream("openai", "think_tags_in_content"))
    code, events, stderr = arreio_run(project)
    assert code == 0, stderr
    assert events[-1]["final_text"] == "Hello, world. A <think> tag later is text."


LOADING = {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}


def test_a_server_still_loading_its_model_is_waited_for_past_max_attempts(project, server):
    """llama-server restarted: it answers 503 'Loading model' for a while; the run waits (within
    retry.loading_wait_s), where an ordinary 503 would have used up max_attempts."""
    work, env = project
    (work / ".arreio" / "config.yaml").write_text(
        "retry:\n  base_delay_s: 0.01\n  max_delay_s: 0.05\n  max_attempts: 2\n  loading_wait_s: 30\n"
    )
    server.push(*[Reply.error(503, LOADING)] * 5, Reply.stream("openai", "text_only"))
    code, events, stderr = arreio_run(project)
    assert code == 0, stderr
    retries = [e for e in events if e["type"] == "retry"]
    assert len(retries) == 5 and all("waiting for the model to load" in r["reason"] for r in retries)


def test_a_model_that_never_finishes_loading_fails_with_the_reason(project, server):
    work, _ = project
    (work / ".arreio" / "config.yaml").write_text(
        "retry:\n  base_delay_s: 0.01\n  max_delay_s: 0.05\n  max_attempts: 2\n  loading_wait_s: 0.2\n"
    )
    server.push(*[Reply.error(503, LOADING)] * 60)
    code, _, stderr = arreio_run(project)
    assert code == 1 and "still loading its model" in stderr and "retry.loading_wait_s" in stderr


def test_a_cloud_model_name_served_locally_costs_nothing_unless_priced(project, server):
    work, env = project
    server.push(Reply.stream("openai", "text_only"))
    done = run_cli(work, env, "run", "--model", "openai/gpt-4o", "--json", "Say hello.")
    last = json.loads(done.stdout.splitlines()[-1])
    assert done.returncode == 0 and last["free"] and last["free_because"] == "local" and last["cost_usd"] == 0.0
    server.push(Reply.stream("openai", "text_only"))
    text = run_cli(work, env, "run", "--model", "openai/gpt-4o", "--output", "live", "Say hello.")
    assert text.returncode == 0 and "$0 (local)" in text.stdout
    (work / ".arreio" / "config.yaml").write_text(
        "retry:\n  base_delay_s: 0.01\n  max_delay_s: 0.05\n"
        "prices:\n  openai/gpt-4o: {input: 1000000, output: 1000000}\n"
    )
    server.push(Reply.stream("openai", "text_only"))
    priced = json.loads(
        run_cli(work, env, "run", "--model", "openai/gpt-4o", "--json", "Say hello.").stdout.splitlines()[-1]
    )
    assert not priced["free"] and priced["cost_usd"] > 0  # a million dollars a million tokens: the user's own price

"""Faults through the real SDKs: each failure ends the stream with one `Done(error=...)` of the right
kind, the SDK made exactly one attempt (its own retries are off), and nothing is raised."""

from __future__ import annotations

import asyncio
import socket

import pytest
from provider_fakes import Reply, collect

from arreio.engine.core.messages import Message
from arreio.engine.core.model_io import Done, ModelRequest, TextChunk
from arreio.engine.providers.anthropic import AnthropicProvider
from arreio.engine.providers.openai import OpenAIProvider

REQUEST = ModelRequest(model="m", messages=[Message.user("hi")])


def anthropic(server) -> AnthropicProvider:
    return AnthropicProvider("claude-sonnet-4-6", api_key="test-key", base_url=server.url)


def openai(server) -> OpenAIProvider:
    return OpenAIProvider("gpt-5", api_key="test-key", base_url=f"{server.url}/v1")


def anthropic_error(kind: str, message: str) -> dict:
    return {"type": "error", "error": {"type": kind, "message": message}}


def openai_error(kind: str, message: str, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def only_done(events: list) -> Done:
    assert isinstance(events[-1], Done)
    assert sum(isinstance(e, Done) for e in events) == 1
    return events[-1]


# (reply, expected kind, expected status, expected retry_after) for each vendor
ANTHROPIC_FAULTS = {
    "429 with retry-after": (
        Reply.error(429, anthropic_error("rate_limit_error", "slow down"), {"retry-after": "7"}),
        "retryable",
        429,
        7.0,
    ),
    "429 with retry-after-ms": (
        Reply.error(429, anthropic_error("rate_limit_error", "slow down"), {"retry-after-ms": "1500"}),
        "retryable",
        429,
        1.5,
    ),
    "500": (Reply.error(500, anthropic_error("api_error", "Internal server error")), "retryable", 500, None),
    "529 overloaded": (Reply.error(529, anthropic_error("overloaded_error", "Overloaded")), "retryable", 529, None),
    "401": (Reply.error(401, anthropic_error("authentication_error", "invalid x-api-key")), "auth", 401, None),
    "403": (Reply.error(403, anthropic_error("permission_error", "no access")), "auth", 403, None),
    "context overflow 400": (
        Reply.error(
            400, anthropic_error("invalid_request_error", "prompt is too long: 212000 tokens > 200000 maximum")
        ),
        "context_overflow",
        400,
        None,
    ),
    "other 400": (
        Reply.error(400, anthropic_error("invalid_request_error", "max_tokens: must be positive")),
        "fatal",
        400,
        None,
    ),
    "404": (Reply.error(404, anthropic_error("not_found_error", "model: nope")), "fatal", 404, None),
    "413 too large": (
        Reply.error(413, anthropic_error("request_too_large", "Request exceeds the maximum size")),
        "context_overflow",
        413,
        None,
    ),
}

OPENAI_FAULTS = {
    "429 with retry-after": (
        Reply.error(429, openai_error("requests", "Rate limit reached", "rate_limit_exceeded"), {"retry-after": "3"}),
        "retryable",
        429,
        3.0,
    ),
    "429 insufficient quota": (
        Reply.error(429, openai_error("insufficient_quota", "You exceeded your current quota", "insufficient_quota")),
        "fatal",
        429,
        None,
    ),
    "500": (Reply.error(500, openai_error("server_error", "The server had an error")), "retryable", 500, None),
    "503": (Reply.error(503, openai_error("server_error", "Slow Down")), "retryable", 503, None),
    "401": (
        Reply.error(401, openai_error("invalid_request_error", "Incorrect API key", "invalid_api_key")),
        "auth",
        401,
        None,
    ),
    "context overflow 400": (
        Reply.error(
            400,
            openai_error(
                "invalid_request_error",
                (
                    "This model's maximum context length is 128000 tokens. "
                    "However, your messages resulted in 130000 tokens."
                ),
                "context_length_exceeded",
            ),
        ),
        "context_overflow",
        400,
        None,
    ),
    "other 400": (
        Reply.error(400, openai_error("invalid_request_error", "Invalid value: 'tools'")),
        "fatal",
        400,
        None,
    ),
}


@pytest.mark.parametrize("case", list(ANTHROPIC_FAULTS))
def test_anthropic_http_faults_are_classified(server, case):
    reply, kind, status, retry_after = ANTHROPIC_FAULTS[case]
    server.push(reply, Reply.stream("anthropic", "text_only"))  # a second reply the SDK must not fetch
    done = only_done(collect(anthropic(server), REQUEST))
    assert done.stop_reason == "error"
    assert (done.error.kind, done.error.status, done.error.retry_after) == (kind, status, retry_after)
    assert done.error.message.startswith("anthropic: ")
    assert len(server.seen) == 1, "the SDK retried on its own"


@pytest.mark.parametrize("case", list(OPENAI_FAULTS))
def test_openai_http_faults_are_classified(server, case):
    reply, kind, status, retry_after = OPENAI_FAULTS[case]
    server.push(reply, Reply.stream("openai", "text_only"))
    done = only_done(collect(openai(server), REQUEST))
    assert done.stop_reason == "error"
    assert (done.error.kind, done.error.status, done.error.retry_after) == (kind, status, retry_after)
    assert len(server.seen) == 1, "the SDK retried on its own"


def test_anthropic_error_event_inside_a_200_stream_is_classified_by_its_body(server):
    server.push(
        Reply.stream("anthropic", "error_event_overloaded"), Reply.stream("anthropic", "error_event_invalid_request")
    )
    events = collect(anthropic(server), REQUEST)
    assert events[0] == TextChunk(text="Partial ")
    done = only_done(events)
    assert (done.error.kind, done.error.status) == ("retryable", 200)
    assert "overloaded_error" in done.error.message
    done = only_done(collect(anthropic(server), REQUEST))
    assert (done.error.kind, done.error.status) == ("fatal", 200)


def test_openai_error_chunk_inside_the_stream_is_retryable(server):
    server.push(Reply.stream("openai", "error_event"))
    events = collect(openai(server), REQUEST)
    assert events[0] == TextChunk(text="Partial ")
    done = only_done(events)
    assert done.error.kind == "retryable" and "server_error" in done.error.message


@pytest.mark.parametrize("vendor,quirk", [("anthropic", "tool_call"), ("openai", "tool_call")])
def test_connection_dropped_mid_stream_is_retryable_and_yields_no_tool_call(server, vendor, quirk):
    body = Reply.stream(vendor, quirk).body
    server.push(Reply(body=body, cut_after=len(body) // 2))
    events = collect(anthropic(server) if vendor == "anthropic" else openai(server), REQUEST)
    done = only_done(events)
    assert done.error.kind == "retryable"
    assert not [e for e in events if e.type == "tool_call"]  # a half-assembled call never escapes


@pytest.mark.parametrize("vendor,quirk", [("anthropic", "stream_cut_no_stop"), ("openai", "stream_cut_no_finish")])
def test_stream_that_ends_cleanly_but_early_is_a_retryable_cut(server, vendor, quirk):
    server.push(Reply.stream(vendor, quirk))
    events = collect(anthropic(server) if vendor == "anthropic" else openai(server), REQUEST)
    assert events[0] == TextChunk(text="This reply never ")
    done = only_done(events)
    assert done.error.kind == "retryable" and "stream ended" in done.error.message


@pytest.mark.parametrize("vendor", ["anthropic", "openai"])
def test_garbled_event_is_a_retryable_stream_fault(server, vendor):
    event = b"event: content_block_delta\n" if vendor == "anthropic" else b""
    server.push(Reply(body=event + b'data: {"type": "content_block_delta", "ind\n\n'))
    done = only_done(collect(anthropic(server) if vendor == "anthropic" else openai(server), REQUEST))
    assert done.error.kind == "retryable" and "malformed stream data" in done.error.message


@pytest.mark.parametrize("vendor", ["anthropic", "openai"])
def test_nothing_listening_is_a_retryable_connection_error(vendor):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the call: nothing listens there
    url = f"http://127.0.0.1:{port}"
    provider = (
        AnthropicProvider("claude-sonnet-4-6", api_key="k", base_url=url)
        if vendor == "anthropic"
        else OpenAIProvider("gpt-5", api_key="k", base_url=url + "/v1")
    )
    done = only_done(collect(provider, REQUEST))
    assert done.error.kind == "retryable" and "connection" in done.error.message.lower()


class HangingMessages:
    """A client whose call never answers, to prove cancellation is not swallowed into a Done."""

    def __init__(self) -> None:
        self.messages = self
        self.chat = self
        self.completions = self

    async def create(self, **_: object) -> None:
        await asyncio.sleep(60)


@pytest.mark.parametrize("cls", [AnthropicProvider, OpenAIProvider])
def test_cancellation_propagates(cls):
    provider = cls("m", api_key="k", base_url=None, client=HangingMessages())

    async def go() -> None:
        task = asyncio.create_task(collect_async(provider))
        await asyncio.sleep(0.05)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())


async def collect_async(provider) -> list:
    return [e async for e in provider.stream(REQUEST)]

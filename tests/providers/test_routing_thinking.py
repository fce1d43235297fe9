"""Model-string routing, the thinking downgrade rule, and the pure pieces of `wire`."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arreio.engine.core.errors import ConfigError
from arreio.engine.core.messages import Message, TextPart, ThinkingPart, ToolCallPart
from arreio.engine.providers.anthropic import AnthropicProvider
from arreio.engine.providers.litellm import LiteLLMProvider
from arreio.engine.providers.openai import OpenAIProvider
from arreio.engine.providers.registry import make_provider, parse_model
from arreio.engine.providers.thinking import canonical_model, prepare_thinking
from arreio.engine.providers.wire import (
    INVALID_ARGS_KEY,
    ToolCallAssembler,
    classify,
    parse_arguments,
    parse_retry_after,
)

# -- routing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model,expected",
    [
        ("anthropic/claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("openai/gpt-5", ("openai", "gpt-5")),
        ("litellm/gemini/gemini-2.5-pro", ("litellm", "gemini/gemini-2.5-pro")),
        ("litellm/ollama/qwen3:8b", ("litellm", "ollama/qwen3:8b")),
        ("offline", ("offline", "offline")),
        ("claude-haiku-4-5", ("anthropic", "claude-haiku-4-5")),
        ("gpt-4.1-mini", ("openai", "gpt-4.1-mini")),
        ("o3", ("openai", "o3")),
        ("o4-mini", ("openai", "o4-mini")),
        ("o1-preview", ("openai", "o1-preview")),
        ("  openai/gpt-5  ", ("openai", "gpt-5")),
    ],
)
def test_parse_model_routes(model, expected):
    assert parse_model(model) == expected


@pytest.mark.parametrize("model", ["llama3", "mistral/large", "anthropic/", "", "ollama-thing", "openai/  "])
def test_unknown_model_is_a_config_error_listing_the_forms(model):
    with pytest.raises(ConfigError) as info:
        parse_model(model)
    assert info.value.exit_code == 5
    assert "anthropic/<model>" in info.value.message and "litellm/" in info.value.message


def test_make_provider_builds_each_adapter_with_its_key():
    env = {"ANTHROPIC_API_KEY": "a-key", "OPENAI_API_KEY": "o-key", "GEMINI_API_KEY": "g-key"}
    a = make_provider("anthropic/claude-sonnet-4-5", env=env, base_url="http://proxy", session_id="s1")
    assert isinstance(a, AnthropicProvider) and a.model == "claude-sonnet-4-5" and a._api_key == "a-key"
    assert a._base_url == "http://proxy"
    o = make_provider("gpt-5", env=env, session_id="s1")
    assert isinstance(o, OpenAIProvider) and o.model == "gpt-5" and o._api_key == "o-key" and o._base_url is None
    lite = make_provider("litellm/gemini/gemini-2.5-pro", env=env)
    assert isinstance(lite, LiteLLMProvider) and lite.model == "gemini/gemini-2.5-pro" and lite._api_key == "g-key"
    assert make_provider("offline", env=env).name == "offline"


@pytest.mark.parametrize(
    "model,var",
    [
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("openai/gpt-5", "OPENAI_API_KEY"),
        ("litellm/gemini/gemini-2.5-pro", "GEMINI_API_KEY"),
    ],
)
def test_missing_key_names_the_variable(model, var):
    with pytest.raises(ConfigError) as info:
        make_provider(model, env={"ANTHROPIC_API_KEY": ""}, base_url=None, session_id=None)
    assert var in info.value.message and info.value.exit_code == 5


def test_litellm_vendor_without_known_key_or_with_a_local_base_url_needs_none():
    assert make_provider("litellm/ollama/qwen3", env={}).model == "ollama/qwen3"
    local = make_provider("litellm/openai/local", env={}, base_url="http://127.0.0.1:8000/v1")
    assert local._api_key is None and local._base_url == "http://127.0.0.1:8000/v1"


def test_importing_the_adapters_does_not_import_the_sdks():
    code = (
        "import sys\n"
        "import arreio.engine.providers.registry, arreio.engine.providers.anthropic, arreio.engine.providers.openai\n"
        "import arreio.engine.providers.litellm, arreio.engine.providers.pricing\n"
        "print(sorted(m for m in ('anthropic', 'openai', 'litellm', 'httpx2') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


# -- thinking ----------------------------------------------------------------------------------

ME = "anthropic/claude-sonnet-4-5"


def history() -> list[Message]:
    return [
        Message.user("q"),
        Message.assistant([ThinkingPart(thinking="mine, signed", signature="s1"), TextPart(text="a1")], ME),
        Message.assistant([ThinkingPart(thinking="mine, unsigned"), TextPart(text="a2")], ME),
        Message.assistant(
            [ThinkingPart(thinking="theirs", signature="sx"), ToolCallPart(id="c", name="t")], "openai/gpt-5"
        ),
        Message.assistant([ThinkingPart(thinking="", signature="redacted")], "openai/gpt-5"),
        Message.assistant([ThinkingPart(thinking="unstamped")], None),
    ]


def test_same_model_gets_signed_thinking_verbatim_others_get_text_or_nothing():
    out = prepare_thinking(history(), "claude-sonnet-4-5", can_replay=True)
    assert out[1].parts == [ThinkingPart(thinking="mine, signed", signature="s1"), TextPart(text="a1")]
    assert out[2].parts == [TextPart(text="a2")]  # unsigned: cannot be replayed, not echoed as text
    assert out[3].parts == [TextPart(text="<thinking>\ntheirs\n</thinking>"), ToolCallPart(id="c", name="t")]
    assert out[4].parts == [TextPart(text="<thinking>\nunstamped\n</thinking>")]  # the empty one was dropped whole
    assert len(out) == 5


def test_a_wire_without_replay_drops_own_thinking():
    out = prepare_thinking(history(), "claude-sonnet-4-5", can_replay=False)
    assert out[1].parts == [TextPart(text="a1")]


def test_downgrade_is_pure_and_model_names_compare_across_routes():
    before = history()
    snapshot = [m.model_dump() for m in before]
    prepare_thinking(before, "gpt-5", can_replay=True)
    assert [m.model_dump() for m in before] == snapshot
    assert canonical_model("litellm/anthropic/Claude-X") == canonical_model("claude-x") == "claude-x"
    out = prepare_thinking(history(), "litellm/anthropic/claude-sonnet-4-5", can_replay=True)
    assert out[1].parts[0] == ThinkingPart(thinking="mine, signed", signature="s1")


# -- wire --------------------------------------------------------------------------------------


def test_parse_arguments():
    assert parse_arguments("") == {} and parse_arguments("  ") == {}
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments('{"a": ') is None and parse_arguments("[1]") is None


def test_assembler_keeps_malformed_arguments_visible_unless_truncated():
    calls = ToolCallAssembler()
    calls.add(1, id="b", name="t", args="{oops")
    calls.add(0, id="a", name="t", args='{"x"')
    calls.add(0, args=": 1}")
    done = calls.finish()
    assert [(c.id, c.arguments) for c in done] == [("a", {"x": 1}), ("b", {INVALID_ARGS_KEY: "{oops"})]
    calls.add(0, id="a", name="t", args="{oops")
    assert calls.finish(truncated=True) == []


def test_retry_after_forms():
    assert parse_retry_after({"Retry-After": "12"}) == 12.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, now=1445412480.0) == 30.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None
    assert parse_retry_after({"retry-after": "-5"}) == 0.0


@pytest.mark.parametrize(
    "status,body,kind",
    [
        (408, None, "retryable"),
        (409, None, "retryable"),
        (502, "<html>bad gateway</html>", "retryable"),
        (422, {"error": {"message": "bad schema"}}, "fatal"),
        (200, {"type": "error", "error": {"type": "rate_limit_error", "message": "x"}}, "retryable"),
        (None, {"message": "weird", "type": "mystery"}, "retryable"),
        (
            400,
            {
                "error": {
                    "type": "invalid_request_error",
                    "message": "input length and `max_tokens` exceed context limit",
                }
            },
            "context_overflow",
        ),
        (
            429,
            {"error": {"type": "rate_limit_error", "message": "tokens per minute exceed the context window budget"}},
            "retryable",
        ),
    ],
)
def test_classify_by_status_and_body(status, body, kind):
    assert classify(status, body).kind == kind


# -- base URLs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("vendor", ["anthropic", "openai"])
def test_sdk_base_url_variables_are_honoured_when_no_base_url_is_given(server, monkeypatch, vendor):
    from provider_fakes import Reply, collect

    from arreio.engine.core.model_io import ModelRequest

    var, suffix, model = {
        "anthropic": ("ANTHROPIC_BASE_URL", "", "anthropic/claude-sonnet-4-6"),
        "openai": ("OPENAI_BASE_URL", "/v1", "openai/gpt-5"),
    }[vendor]
    monkeypatch.setenv(var, server.url + suffix)
    server.push(Reply.stream(vendor, "text_only"))
    provider = make_provider(
        model, env={"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}, base_url=None, session_id=None
    )
    events = collect(provider, ModelRequest(model=model, messages=[Message.user("hi")]))
    assert events[-1].stop_reason == "end_turn" and len(server.seen) == 1

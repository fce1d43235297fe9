"""The context window is asked from the server (llama-server, vLLM, LM Studio, Ollama), learnt from a
refusal, cached per base URL + model, and the run fits itself to it: compaction at the watermark of
the server's window, a reply cap that fits the room left."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from provider_fakes import Reply

from arreio.engine.providers.server_window import (
    WindowCache,
    api_root,
    endpoint_to_ask,
    probe_window,
    server_window,
    window_of_refusal,
)
from tests.conftest import run_cli

LLAMA_MODELS = {
    "object": "list",
    "data": [
        {
            "id": "qwen2.5-1.5b-instruct-q4_k_m.gguf",
            "object": "model",
            "owned_by": "llamacpp",
            "meta": {"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": 32768, "n_ctx": 8192},
        }
    ],
}
LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 8192, "params": {}}, "total_slots": 1}
LLAMA_OVERFLOW = {
    "error": {
        "code": 400,
        "message": "request (9001 tokens) exceeds the available context size (6144 tokens)",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 9001,
        "n_ctx": 6144,
    }
}


def test_llama_server_says_its_window_in_props(server):
    server.serve("/v1/models", LLAMA_MODELS).serve("/props", LLAMA_PROPS)
    found = probe_window(f"{server.url}/v1", "qwen2.5-coder:7b")
    assert (found.window, found.served) == (8192, ["qwen2.5-1.5b-instruct-q4_k_m.gguf"])
    assert "/props" in found.source


def test_llama_server_meta_n_ctx_without_props(server):
    server.serve("/v1/models", LLAMA_MODELS)
    assert probe_window(server.url, "anything").window == 8192


def test_vllm_max_model_len(server):
    server.serve(
        "/v1/models",
        {
            "object": "list",
            "data": [
                {"id": "Qwen/Qwen2.5-7B-Instruct", "object": "model", "max_model_len": 32768},
                {"id": "other", "object": "model", "max_model_len": 4096},
            ],
        },
    )
    found = probe_window(f"{server.url}/v1/", "Qwen/Qwen2.5-7B-Instruct")
    assert found.window == 32768 and server.got == ["/v1/models"]  # one request: nothing more to ask


def test_lm_studio_loaded_context_length(server):
    server.serve("/v1/models", {"data": [{"id": "qwen2.5-7b-instruct"}, {"id": "llama-3.2-3b"}]})
    server.serve(
        "/api/v0/models",
        {
            "object": "list",
            "data": [
                {
                    "id": "qwen2.5-7b-instruct",
                    "state": "loaded",
                    "max_context_length": 32768,
                    "loaded_context_length": 4096,
                },
                {"id": "llama-3.2-3b", "state": "not-loaded", "max_context_length": 131072},
            ],
        },
    )
    assert probe_window(server.url, "qwen2.5-7b-instruct").window == 4096
    assert probe_window(server.url, "llama-3.2-3b").window == 131072


def test_ollama_running_model_context_length(server):
    server.serve("/v1/models", {"object": "list", "data": [{"id": "qwen2.5:0.5b", "object": "model"}]})
    server.serve("/api/ps", {"models": [{"name": "qwen2.5:0.5b", "model": "qwen2.5:0.5b", "context_length": 2048}]})
    assert probe_window(f"{server.url}/v1", "qwen2.5:0.5b").window == 2048


def test_ollama_model_not_loaded_is_read_from_api_show(server):
    server.serve("/api/ps", {"models": []})
    server.push(
        Reply.error(
            200, {"parameters": "temperature 0.7\nnum_ctx 16384", "model_info": {"qwen2.context_length": 32768}}
        )
    )
    assert probe_window(server.url, "qwen2.5:7b").window == 16384
    assert server.seen[0].path == "/api/show" and server.seen[0].body == {"model": "qwen2.5:7b"}


def test_a_server_that_does_not_say_is_no_error(server):
    found = probe_window(server.url, "m")
    assert found.window is None and "did not say" in (found.error or "")
    assert server.seen == []  # a server not known to be Ollama is never POSTed to: no reply of a run is taken


def test_nothing_listening_stops_at_the_first_request():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    found = probe_window(f"http://127.0.0.1:{port}/v1", "m")
    assert found.window is None and "nothing answers" in (found.error or "")


def test_only_a_server_behind_a_base_url_is_asked():
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}
    assert endpoint_to_ask("openai/qwen", env, None) == "http://127.0.0.1:8080/v1"
    assert endpoint_to_ask("openai/gpt-5", {}, None) is None  # OpenAI itself: the table knows
    assert endpoint_to_ask("openai/x", {"OPENAI_BASE_URL": "https://api.groq.com/openai/v1"}, None) is None
    assert endpoint_to_ask("anthropic/claude-sonnet-4-5", env, None) is None
    assert endpoint_to_ask("offline", env, "http://127.0.0.1:1/v1") is None
    assert endpoint_to_ask("openai/m", {}, "https://gpu-box.example:8000/v1") == "https://gpu-box.example:8000/v1"
    assert api_root("http://h:1/v1/") == "http://h:1"


def test_the_window_is_cached_per_base_url_and_model(server, tmp_path: Path):
    server.serve("/v1/models", LLAMA_MODELS).serve("/props", LLAMA_PROPS)
    env = {"HOME": str(tmp_path), "OPENAI_BASE_URL": f"{server.url}/v1"}
    first = server_window("openai/qwen", env, None)
    asked = len(server.got)
    again = server_window("openai/qwen", env, None)
    assert (first.window, first.probed, again.window, again.probed) == (8192, True, 8192, False)
    assert len(server.got) == asked  # the second run asks nobody
    cache = json.loads((tmp_path / ".cache" / "arreio" / "windows.json").read_text())
    assert cache["entries"][f"{server.url}|qwen"]["window"] == 8192
    server_window("openai/other", env, None)
    assert len(server.got) > asked  # another model is asked on its own


def test_a_cached_miss_is_asked_again_later(tmp_path: Path):
    clock = [1000.0]
    cache = WindowCache(tmp_path / "w.json", now=lambda: clock[0])
    from arreio.engine.providers.server_window import ServedWindow

    cache.put("http://h", "m", ServedWindow(None, error="no"))
    cache.put("http://h", "n", ServedWindow(4096, "x"))
    clock[0] += 3600
    assert cache.get("http://h", "m") is None and cache.get("http://h", "n").window == 4096


@pytest.mark.parametrize(
    "text, window",
    [
        (json.dumps(LLAMA_OVERFLOW), 6144),
        ("This model's maximum context length is 2048 tokens. However, you requested 2100 tokens", 2048),
        ("the model is loaded with context length of only 4096 tokens, which is not enough.", 4096),
        ("prompt is too long: 212000 tokens > 200000 maximum", None),
    ],
)
def test_a_refusal_names_the_window(text, window):
    assert window_of_refusal(text) == window


# -- whole runs ----------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, server) -> tuple[Path, dict[str, str]]:
    (tmp_path / "README.md").write_text(
        "# Demo\n\n" + ("A tiny project with a long readme line of prose. " * 12 + "\n") * 40
    )
    (tmp_path / ".arreio").mkdir()
    (tmp_path / ".arreio" / "config.yaml").write_text(
        "retry:\n  base_delay_s: 0.01\n  max_delay_s: 0.05\ncontext:\n  calibrate: false\n"
    )  # the fixtures' usage is no real count
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "ARREIO_", "XDG_"))}
    env.update(HOME=str(tmp_path / "home"), OPENAI_API_KEY="test", OPENAI_BASE_URL=f"{server.url}/v1")
    return tmp_path, env


def arreio_run(project: tuple[Path, dict[str, str]]) -> tuple[int, list[dict], str]:
    work, env = project
    done = run_cli(
        work, env, "run", "--model", "openai/qwen2.5-coder:7b", "--json", "Read README.md and say what it is."
    )
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")], done.stderr


def test_a_run_compacts_at_the_watermark_of_the_servers_window(project, server):
    # llama-server -c 8192: the README read fills more than 60% of it, so the run compacts before the
    # next call instead of filling the window and taking the server's refusal
    server.serve("/v1/models", LLAMA_MODELS).serve("/props", LLAMA_PROPS)
    server.push(
        Reply.stream("openai", "tool_call"), Reply.stream("openai", "text_only"), Reply.stream("openai", "text_only")
    )
    code, events, stderr = arreio_run(project)
    assert code == 0, stderr
    assert [e for e in events if e["type"] == "compaction"]  # pruned (or compacted) at 60% of 8,192
    caps = [s.body["max_tokens"] for s in server.seen]
    assert all(1024 < cap < 8192 for cap in caps)  # fitted to the room the prompt leaves
    assert not [e for e in events if e["type"] == "warning" and e.get("code") == "window_unknown"]


def test_a_run_learns_the_window_from_the_servers_refusal(project, server):
    # a server that says nothing: a warning, the table's guess, and then the refusal names the window
    server.push(
        Reply.stream("openai", "tool_call"),
        Reply.error(400, LLAMA_OVERFLOW),
        *[Reply.stream("openai", "text_only")] * 2,
    )
    code, events, stderr = arreio_run(project)
    assert code == 0, stderr
    warned = [e for e in events if e["type"] == "warning" and e.get("code") == "window_unknown"]
    assert len(warned) == 1 and "did not say" in warned[0]["message"] and "context.window" in warned[0]["message"]
    cache = json.loads((project[0] / "home" / ".cache" / "arreio" / "windows.json").read_text())
    assert cache["entries"][f"{server.url}|qwen2.5-coder:7b"]["window"] == 6144
    # the next run starts from it: its first request already fits a 6,144-token window
    server.replies.clear()
    server.push(Reply.stream("openai", "text_only"))
    code, events, stderr = arreio_run(project)
    assert code == 0, stderr
    assert server.seen[-1].body["max_tokens"] < 6144 - 1000  # the prompt (over 1,000 tokens) and the cap fit it
    assert not [e for e in events if e["type"] == "warning" and e.get("code") == "window_unknown"]


def test_a_small_configured_reply_cap_is_sent_as_configured(project, server):
    # the room the window leaves may lower the cap, never raise it: 40 tokens asked are 40 tokens sent
    server.serve("/v1/models", LLAMA_MODELS).serve("/props", LLAMA_PROPS)
    work, _env = project
    config = work / ".arreio" / "config.yaml"
    config.write_text(config.read_text() + "max_tokens: 40\n")
    server.push(Reply.stream("openai", "tool_call"), Reply.stream("openai", "text_only"))
    code, _events, stderr = arreio_run(project)
    assert code == 0, stderr
    assert [s.body["max_tokens"] for s in server.seen if "max_tokens" in s.body] == [40, 40]

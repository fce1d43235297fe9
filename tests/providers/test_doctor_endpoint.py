"""`arreio doctor`, `arreio models` and `arreio config list` see the server a base URL points at: whether
it answers, which models it serves, their window, whether the model returns tool calls."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from provider_fakes import Reply

from tests.conftest import run_cli

MODELS = {
    "object": "list",
    "data": [
        {"id": "qwen2.5-1.5b", "object": "model", "owned_by": "llamacpp", "meta": {"n_ctx_train": 32768, "n_ctx": 8192}}
    ],
}
PROPS = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}


def whole(message: dict) -> Reply:
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
    }
    return Reply(body=json.dumps(body).encode(), content_type="application/json")


def _env(tmp_path: Path, base_url: str, model: str = "openai/qwen2.5-1.5b") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "ARREIO_", "XDG_"))}
    env.update(HOME=str(tmp_path / "home"), OPENAI_API_KEY="test", OPENAI_BASE_URL=base_url, ARREIO_MODEL=model)
    return env


def doctor(tmp_path: Path, env: dict[str, str]) -> tuple[int, dict[str, dict]]:
    done = run_cli(tmp_path, env, "doctor", "--no-mcp", "--json")
    return done.returncode, {c["name"]: c for c in json.loads(done.stdout)["checks"]}


def test_doctor_says_when_nothing_answers_at_the_base_url(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, checks = doctor(tmp_path, _env(tmp_path, f"http://127.0.0.1:{port}/v1"))
    assert code == 1 and checks["endpoint"]["status"] == "problem"
    assert "nothing answers" in checks["endpoint"]["detail"] and "OPENAI_BASE_URL" in checks["endpoint"]["fix"]


def test_doctor_checks_the_model_window_and_tool_calls(tmp_path: Path, server) -> None:
    server.serve("/v1/models", MODELS).serve("/props", PROPS)
    server.push(
        whole(
            {
                "content": None,
                "tool_calls": [
                    {
                        "id": "t1",
                        "type": "function",
                        "function": {"name": "get_time", "arguments": '{"city": "Lisbon"}'},
                    }
                ],
            }
        )
    )
    code, checks = doctor(tmp_path, _env(tmp_path, f"{server.url}/v1"))
    assert code == 0, checks
    assert checks["model"]["status"] == "ok" and "qwen2.5-1.5b is served" in checks["model"]["detail"]
    assert checks["window"]["status"] == "ok" and "8,192 tokens" in checks["window"]["detail"]
    assert checks["tool calls"]["status"] == "ok"
    probe = server.seen[0].body
    assert probe["stream"] is False and [t["function"]["name"] for t in probe["tools"]] == ["get_time"]
    assert checks["tools"]["status"] == "ok" and "o200k_base" in checks["tools"]["detail"]


def test_doctor_names_a_model_the_server_does_not_serve_and_a_reply_without_tool_calls(tmp_path: Path, server) -> None:
    server.serve("/v1/models", {"data": [{"id": "qwen2.5:7b"}, {"id": "llama3.2:3b"}]})
    server.push(whole({"content": "It is 10:00 in Lisbon."}))
    code, checks = doctor(tmp_path, _env(tmp_path, f"{server.url}/v1", model="openai/qwen3:8b"))
    assert code == 1
    assert checks["model"]["status"] == "problem" and "qwen2.5:7b, llama3.2:3b" in checks["model"]["detail"]
    assert checks["window"]["status"] == "warning" and "context.window" in checks["window"]["fix"]
    assert checks["tool calls"]["status"] == "problem" and "not tool_calls" in checks["tool calls"]["detail"]


def test_models_shows_the_server_openai_models_go_to(tmp_path: Path, server) -> None:
    server.serve("/v1/models", MODELS).serve("/props", PROPS)
    env = _env(tmp_path, f"{server.url}/v1")
    done = run_cli(tmp_path, env, "models", "--json")
    endpoint = json.loads(done.stdout)["endpoint"]
    assert endpoint["from"] == "OPENAI_BASE_URL" and endpoint["url"] == f"{server.url}/v1"
    assert endpoint["models"] == [
        {"model": "openai/qwen2.5-1.5b", "context_window": 8192, "source": "n_ctx in /props (llama-server)"}
    ]
    shown = run_cli(tmp_path, env, "models").stdout
    assert f"OPENAI_BASE_URL={server.url}/v1" in shown and "openai/qwen2.5-1.5b  8,192 tokens" in shown


@pytest.mark.parametrize("model, var", [("openai/qwen2.5-1.5b", "OPENAI_BASE_URL")])
def test_config_list_shows_the_base_url_the_sdk_reads(tmp_path: Path, model: str, var: str) -> None:
    env = _env(tmp_path, "http://127.0.0.1:8080/v1", model=model)
    rows = {r["key"]: r for r in json.loads(run_cli(tmp_path, env, "config", "list", "--json").stdout)["settings"]}
    assert rows["base_url"]["value"] == "http://127.0.0.1:8080/v1" and var in rows["base_url"]["source"]

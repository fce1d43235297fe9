"""What small local servers do to a run: llama-cpp-python cannot stream tool calls and streams no usage;
a small model loops on one sentence. Whole `arreio run`s (a real process) against a loopback server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from provider_fakes import Reply

from tests.conftest import run_cli

NO_STREAMED_TOOLS = Reply.error(
    500,
    {
        "error": {
            "message": "Automatic streaming tool choice is not supported",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    },
)


def whole(message: dict, finish: str, usage: dict | None = None) -> Reply:
    """A non-streamed Chat Completions reply, as llama-cpp-python's server sends it."""
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "local",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "logprobs": None, "finish_reason": finish}
        ],
        "usage": usage,
    }
    return Reply(body=json.dumps(body).encode(), content_type="application/json")


def streamed(pieces: list[str], usage: dict | None = None) -> Reply:
    """A streamed text reply; with `usage` None no chunk carries token counts (llama-cpp-python)."""

    def chunk(delta: dict, finish: str | None = None, **more) -> bytes:
        body = {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "local",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **more,
        }
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    out = chunk({"role": "assistant", "content": ""}) + b"".join(chunk({"content": p}) for p in pieces)
    out += chunk({}, "stop") + (chunk({}, None, usage=usage) if usage else b"") + b"data: [DONE]\n\n"
    return Reply(body=out)


@pytest.fixture
def project(tmp_path: Path, server) -> tuple[Path, dict[str, str]]:
    (tmp_path / "README.md").write_text("# Demo\n\nA tiny project.\n")
    (tmp_path / ".arreio").mkdir()
    (tmp_path / ".arreio" / "config.yaml").write_text("retry:\n  base_delay_s: 0.01\n  max_delay_s: 0.05\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "ARREIO_", "XDG_"))}
    env.update(HOME=str(tmp_path / "home"), OPENAI_API_KEY="test", OPENAI_BASE_URL=f"{server.url}/v1")
    return tmp_path, env


def arreio_run(project: tuple[Path, dict[str, str]]) -> tuple[int, list[dict], str]:
    work, env = project
    done = run_cli(work, env, "run", "--model", "openai/qwen2.5-1.5b", "--json", "Read README.md and say what it is.")
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")], done.stderr


def test_a_server_that_cannot_stream_tool_calls_is_asked_for_whole_replies(project, server):
    call = {
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "README.md"}'},
            }
        ],
    }
    usage = {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920}
    server.push(
        NO_STREAMED_TOOLS, whole(call, "tool_calls", usage), whole({"content": "A demo project."}, "stop", usage)
    )
    code, events, stderr = arreio_run(project)
    assert code == 0, stderr
    assert [e["name"] for e in events if e["type"] == "tool_end" and not e["is_error"]] == ["read_file"]
    assert events[-1]["final_text"] == "A demo project." and events[-1]["input_tokens"] == 1800
    assert [s.body["stream"] for s in server.seen] == [True, False, False]  # remembered after the refusal
    assert "stream_options" not in server.seen[1].body
    assert not [e for e in events if e["type"] == "retry"]


def test_a_stream_without_usage_is_estimated_and_said_so(project, server):
    server.push(streamed(["It is a ", "demo project."]), streamed(["Done."]))
    code, events, stderr = arreio_run(project)
    assert code == 0, stderr
    done = events[-1]
    assert done["input_tokens"] > 500 and done["output_tokens"] > 0 and done["tokens_estimated"] is True
    warned = [e for e in events if e["type"] == "warning" and e.get("code") == "usage_estimated"]
    assert len(warned) == 1 and "estimates" in warned[0]["message"]
    report = json.loads((project[0] / done["report_path"]).read_text())
    assert report["tokens_estimated"] is True


def test_a_server_that_counts_is_not_estimated(project, server):
    server.push(streamed(["A demo."], usage={"prompt_tokens": 700, "completion_tokens": 3, "total_tokens": 703}))
    code, events, stderr = arreio_run(project)
    assert code == 0, stderr
    assert events[-1]["input_tokens"] == 700 and events[-1]["tokens_estimated"] is False
    assert not [e for e in events if e["type"] == "warning" and e.get("code") == "usage_estimated"]


def test_a_reply_that_repeats_itself_is_stopped_as_a_failed_step(project, server):
    loop = ["The answer is 42. "] * 3000  # ~54,000 characters: a 1.5B model's loop to the reply cap
    server.push(streamed(loop))
    code, events, stderr = arreio_run(project)
    assert code == 1
    shown = "".join(e["text"] for e in events if e["type"] == "text_delta")
    assert 1600 <= len(shown) < 5000  # stopped soon after it began, not at the end of the reply
    assert "repeated itself" in events[-1]["message"] and "The answer is 42." in events[-1]["message"]
    assert len(server.seen) == 1  # a loop is not retried

"""A connection failure names the address and the cause: through the real SDKs, against a
loopback port nothing listens on, after the retries the harness makes."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # free once closed: nothing listens there


@pytest.mark.parametrize(
    "model,key,base",
    [
        ("openai/gpt-4o", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    ],
)
def test_a_refused_connection_says_where_and_why(cli, monkeypatch: pytest.MonkeyPatch, model, key, base) -> None:
    port = closed_port()
    monkeypatch.setenv(key, "test-key")
    monkeypatch.setenv(base, f"http://127.0.0.1:{port}")
    Path("G.md").write_text("# Say hi\n")
    Path(".arreio").mkdir()
    Path(".arreio/config.yaml").write_text("retry: {max_attempts: 2, base_delay_s: 0.01}\n")
    result = cli("run", "--goal", "G.md", "--model", model)
    assert result.exit_code == 1
    assert f"cannot reach http://127.0.0.1:{port}: connection refused" in result.stderr

"""With no model configured, a provider's API key in the environment says which model the user means:
`ANTHROPIC_API_KEY=… arreio run "Fix the failing test"` ran the offline model, did nothing and said
`success`. The choice is said on the run's first line; anything configured (a config file, ARREIO_MODEL,
--model, --offline) wins. Real SDK clients against the local wire server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from provider_fakes import Reply
from typer.testing import CliRunner

from arreio.cli.app import app


@pytest.fixture
def work(wire_project, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = wire_project()
    for var in ("ARREIO_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    (project / "README.md").write_text("# Demo\n")
    return project


def _run(*args: str) -> tuple[int, list[dict], str]:
    result = CliRunner().invoke(app, ["run", "Look at the README", *args], catch_exceptions=False)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return result.exit_code, events, result.stdout + result.stderr


def test_an_anthropic_key_and_no_model_configured_runs_claude_and_says_why(work: Path, server) -> None:
    server.push(Reply.stream("anthropic", "text_only"))
    code, events, _ = _run("--json")
    assert code == 0 and events[0]["model"] == "anthropic/claude-sonnet-4-5"
    assert "ANTHROPIC_API_KEY is set" in events[0]["model_chosen"]
    assert server.seen and server.seen[0].path.endswith("/messages")  # the real Anthropic client spoke


def test_the_first_line_of_the_live_view_says_the_model_was_chosen_by_the_key(work: Path, server) -> None:
    server.push(Reply.stream("anthropic", "text_only"))
    code, _, out = _run()
    first = out.splitlines()[0]
    assert code == 0 and "anthropic/claude-sonnet-4-5" in first and "ANTHROPIC_API_KEY is set" in first
    assert "--offline" in first


def test_only_an_openai_key_runs_an_openai_model(work: Path, server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    server.push(Reply.stream("openai", "text_only"))
    code, events, _ = _run("--json")
    assert code == 0 and events[0]["model"].startswith("openai/") and "OPENAI_API_KEY" in events[0]["model_chosen"]


def test_an_openai_key_beside_a_local_server_url_is_not_taken_for_the_cloud(
    work: Path, server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    code, events, _ = _run("--json")
    assert events[0]["model"] == "offline" and events[0]["model_chosen"] is None and not server.seen


@pytest.mark.parametrize("how", ["--offline", "config", "env"])
def test_a_configured_model_wins_over_the_key(work: Path, server, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    args = ["--json"]
    if how == "--offline":
        args.append("--offline")
    elif how == "config":
        (work / ".arreio" / "config.yaml").write_text("model: offline\n")
    else:
        monkeypatch.setenv("ARREIO_MODEL", "offline")
    _, events, _ = _run(*args)
    assert events[0]["model"] == "offline" and events[0]["model_chosen"] is None and not server.seen

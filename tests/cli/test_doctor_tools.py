"""`arreio doctor`'s tools line warns about the schemas' token cost only where it costs: a model on a
local server, which reads them on a CPU before its first token. A project with a knowledge base offers
`kb_search` too, which took the default set past the budget, and a first `arreio doctor` with the
offline model said `warning … fewer tools for a small local model` on a machine that was ready.
Real processes: `arreio kb add`, then `arreio doctor --json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.slow


def _tools_line(work: Path, env: dict[str, str]) -> dict:
    done = run_cli(work, env, "doctor", "--json", "--no-mcp", "--no-model-call")
    return next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "tools")


@pytest.fixture
def with_a_knowledge_base(tmp_path: Path, arreio_env: dict[str, str]) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("# Notes\n\nThe deploy runs on Fridays.\n")
    added = run_cli(work, arreio_env, "kb", "add", "notes.md")
    assert added.returncode == 0, added.stderr
    return work


def test_the_offline_model_with_a_knowledge_base_is_ok(with_a_knowledge_base: Path, arreio_env: dict[str, str]) -> None:
    line = _tools_line(with_a_knowledge_base, arreio_env)
    assert "kb_search" in line["detail"]  # the set that went past the budget
    assert (line["status"], line["fix"]) == ("ok", "")


def test_a_model_on_a_local_server_is_still_warned(with_a_knowledge_base: Path, arreio_env: dict[str, str]) -> None:
    config = with_a_knowledge_base / ".arreio" / "config.yaml"
    config.write_text("model: openai/qwen3\nbase_url: http://127.0.0.1:9/v1\n")
    line = _tools_line(with_a_knowledge_base, {**arreio_env, "OPENAI_API_KEY": "none"})
    assert line["status"] == "warning" and "fewer tools for a small local model" in line["fix"]

"""Local OpenAI-compatible servers as users meet them: a configuration error is said at once, as one."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_cli


def test_litellm_without_a_key_is_a_configuration_error_not_five_retries(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "ARREIO_"))}
    env.update(HOME=str(tmp_path / "home"), ARREIO_BASE_URL="http://127.0.0.1:9/v1")
    done = run_cli(tmp_path, env, "run", "say hi", "--model", "litellm/openai/local-m", "--json", timeout=120)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 5, done.stderr
    assert not [e for e in events if e["type"] == "retry"]
    assert "Missing credentials" in done.stderr and "any non-empty value works for a local server" in done.stderr

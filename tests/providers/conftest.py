"""Fixtures for the provider tests; the fakes themselves live in `provider_fakes.py`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from provider_fakes import server, wire  # noqa: F401  (the local wire server and the mock transport fixtures)

FAST_RETRIES = "retry:\n  base_delay_s: 0.01\n  max_delay_s: 0.05\n"


@pytest.fixture
def wire_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server) -> Callable[[str], Path]:  # noqa: F811
    """A project whose real SDK clients talk to the local wire server (keys set, HOME isolated):
    `wire_project(config_yaml)` writes `.arreio/config.yaml` and returns the project folder."""

    def make(config: str = FAST_RETRIES) -> Path:
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("ARREIO_BASE_URL", server.url)
        (tmp_path / ".arreio").mkdir(exist_ok=True)
        (tmp_path / ".arreio" / "config.yaml").write_text(config)
        return tmp_path

    return make

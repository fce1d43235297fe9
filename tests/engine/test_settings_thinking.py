"""The `thinking` setting: off by default, adaptive, or a budget that fits under max_tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from arreio.engine.core.config import load_settings
from arreio.engine.core.errors import ConfigError


def settings(tmp_path: Path, config: str = "", **env: str):
    (tmp_path / ".arreio").mkdir(exist_ok=True)
    (tmp_path / ".arreio" / "config.yaml").write_text(config)
    return load_settings(tmp_path, env={"HOME": str(tmp_path / "home"), **env})


def test_off_by_default_and_what_a_request_carries(tmp_path: Path) -> None:
    assert settings(tmp_path).thinking_request is None
    assert settings(tmp_path, "thinking: adaptive\n").thinking_request == "adaptive"
    assert settings(tmp_path, "thinking: 4096\n").thinking_request == 4096
    assert settings(tmp_path, ARREIO_THINKING="2048").thinking_request == 2048  # env strings parse


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("thinking: 512\n", "at least 1024"),
        ("max_tokens: 4000\nthinking: 4000\n", "below max_tokens (4000)"),
        ("thinking: always\n", "thinking"),
    ],
)
def test_a_budget_that_does_not_fit_is_refused(tmp_path: Path, config: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        settings(tmp_path, config)

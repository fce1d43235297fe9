"""The token estimator against real tokenizer counts (fixtures/tokens/counts.json, measured offline by
fixtures/tokens/measure.py with OpenAI's o200k_base and cl100k_base BPE files that litellm bundles, and
the Claude tokenizer litellm bundles), its calibration, and the context-window table."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

import pytest

from arreio.engine.context.window import DEFAULT_WINDOW, context_window
from arreio.engine.core.tokens import Calibrator, bundled_tiktoken, bundled_tokenizer_file, estimate_text, profile_for

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tokens"
COUNTS = json.loads((FIXTURES / "counts.json").read_text())
TOKENIZER = {"o200k": "o200k_base", "cl100k": "cl100k_base", "claude": "claude_legacy"}


@pytest.mark.parametrize("profile", sorted(TOKENIZER))
@pytest.mark.parametrize("name", ["english.txt", "python.txt", "chinese.txt", "japanese.txt", "mixed.txt"])
def test_estimate_within_15_percent_of_the_real_tokenizer(name: str, profile: str) -> None:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    real = COUNTS[name][TOKENIZER[profile]]
    assert abs(estimate_text(text, profile) - real) / real <= 0.15


def test_cjk_is_not_underestimated_like_chars_over_four() -> None:
    text = (FIXTURES / "chinese.txt").read_text(encoding="utf-8")
    real = COUNTS["chinese.txt"]["o200k_base"]
    assert len(text) / 4 < 0.5 * real  # the naive rule is off by more than half
    assert estimate_text(text, "o200k") > 0.85 * real


@pytest.mark.skipif(  # found, not built: building the encoding costs each worker ~0.3 s of CPU at collection
    bundled_tokenizer_file("o200k_base") is None or find_spec("tiktoken") is None,
    reason="litellm's bundled BPE files are not installed",
)
@pytest.mark.parametrize("path", ["engine/loop/runner.py", "engine/session/file.py", "README.md"])
def test_held_out_repo_files_stay_within_15_percent(path: str) -> None:
    text = (FIXTURES.parents[1] / path).read_text(encoding="utf-8")
    real = len(bundled_tiktoken("o200k_base").encode(text, disallowed_special=()))
    assert abs(estimate_text(text, "o200k") - real) / real <= 0.15


def test_bundled_tokenizer_matches_the_committed_counts() -> None:
    enc = bundled_tiktoken("cl100k_base")
    if enc is None:
        pytest.skip("litellm's bundled BPE files are not installed")
    text = (FIXTURES / "japanese.txt").read_text(encoding="utf-8")
    assert len(enc.encode(text)) == COUNTS["japanese.txt"]["cl100k_base"]


def test_profiles_by_model() -> None:
    assert profile_for("openai/gpt-4o-mini") == "o200k"
    assert profile_for("gpt-4-turbo") == "cl100k"
    assert profile_for("anthropic/claude-sonnet-4-5") == "claude"
    assert profile_for("offline") == "claude"


def test_calibration_converges_to_the_reported_ratio_and_ignores_outliers(tmp_path: Path) -> None:
    cal = Calibrator()
    for _ in range(12):
        cal.observe("m", 1000, 1300)
    assert cal.factor("m") == pytest.approx(1.3, rel=0.02)
    cal.observe("m", 1000, 9000)  # a retry billed twice, a cached prefix left out: not a tokenizer fact
    assert cal.factor("m") == pytest.approx(1.3, rel=0.02)
    assert cal.factor("other") == 1.0
    assert cal.tokens("m", 1000) == 1300
    cal.save(tmp_path / "cal.json")
    assert Calibrator.load(tmp_path / "cal.json").factor("m") == pytest.approx(1.3, rel=0.02)
    (tmp_path / "bad.json").write_text("{not json")
    assert Calibrator.load(tmp_path / "bad.json").factors == {}


def test_context_windows_table_override_and_default() -> None:
    assert context_window("anthropic/claude-sonnet-4-5") == 200_000
    assert context_window("openai/gpt-4o") == 128_000
    assert context_window("openai/gpt-4o", {"openai/gpt-4o": 64_000}) == 64_000
    assert context_window("gpt-4o", {"gpt-4o": 50_000}) == 50_000
    assert context_window("anything", window=32_000) == 32_000
    assert context_window("some-unknown-model") == DEFAULT_WINDOW


@pytest.mark.slow
def test_a_window_does_not_change_when_litellm_is_imported() -> None:
    """litellm's model info is asked for a `litellm/` model only: a model another provider serves keeps
    the table's window whatever the process has imported (a fallback to a litellm model imports it)."""
    before = context_window("openai/gpt-5")
    if find_spec("litellm") is None:  # not importorskip: it would import litellm online
        pytest.skip("litellm is not installed")
    from arreio.engine.providers.litellm import import_litellm

    litellm = import_litellm()  # as the product imports it: offline (else it fetches a price list)
    assert context_window("openai/gpt-5") == before == 400_000
    assert context_window("anthropic/claude-sonnet-4-5") == 200_000
    info = litellm.get_model_info("gpt-5")
    assert context_window("litellm/gpt-5") == (info.get("max_input_tokens") or info["max_tokens"])

"""Cost estimates: each token class priced at its own rate, cached tokens as cached, unknown → None."""

from __future__ import annotations

import pytest

from arreio.engine.core.model_io import Usage
from arreio.engine.providers.pricing import cache_share, estimate_cost, normalise, price_for

MILLION = 1_000_000


@pytest.mark.parametrize(
    "model,name",
    [
        ("anthropic/claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("openai/gpt-5-mini-2025-08-07", "gpt-5-mini"),
        ("litellm/gemini/gemini-2.5-pro", "gemini-2.5-pro"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
    ],
)
def test_normalise(model, name):
    assert normalise(model) == name


def test_anthropic_prices_cache_reads_and_writes_at_their_own_rates():
    usage = Usage(input_tokens=MILLION, output_tokens=MILLION, cache_read_tokens=MILLION, cache_write_tokens=MILLION)
    assert estimate_cost("anthropic/claude-sonnet-4-5", usage) == pytest.approx(3.0 + 15.0 + 0.30 + 3.75)


def test_openai_cache_writes_cost_plain_input_and_longest_prefix_wins():
    usage = Usage(input_tokens=MILLION, cache_read_tokens=MILLION, cache_write_tokens=MILLION)
    assert estimate_cost("gpt-4o-mini-2024-07-18", usage) == pytest.approx(0.15 + 0.075 + 0.15)
    assert price_for("gpt-4o-2024-08-06").input == 2.50


def test_cached_run_is_cheaper_than_the_same_run_uncached():
    cold = Usage(input_tokens=100_000, output_tokens=1_000)
    warm = Usage(input_tokens=10_000, output_tokens=1_000, cache_read_tokens=90_000)
    assert estimate_cost("claude-sonnet-4-5", warm) < estimate_cost("claude-sonnet-4-5", cold)


def test_unknown_model_has_no_estimate_and_fallback_reads_litellms_bundled_map():
    assert estimate_cost("litellm/acme/never-heard-of-it", Usage(input_tokens=10)) is None
    # not in our table, present in the price map litellm ships (read as a file, litellm not imported)
    assert price_for("litellm/mistral/mistral-large-latest") is not None


def test_cache_share():
    assert cache_share(Usage()) == 0.0
    assert cache_share(Usage(input_tokens=100, cache_read_tokens=300)) == 0.75
    assert cache_share(Usage(input_tokens=50, cache_read_tokens=25, cache_write_tokens=25)) == 0.25

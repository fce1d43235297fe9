"""What a run cost: a price table for the common models, and the share of input served from cache.

Prices are US dollars per million tokens, as the vendors list them (checked 2025-11: `PRICES_TAKEN`). `Usage`
counts are normalised by the adapters: `input_tokens` is input neither read from nor written to the
cache, so each of the four counts is priced once, at its own rate. A model missing from the table
falls back to the price map litellm ships inside its package (read as a file, never fetched, litellm
not imported); a model in neither has no estimate (None), never a guessed one.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from arreio.engine.core.model_io import Usage

PRICES_TAKEN = "2025-11"  # when the table below was read off the vendors' price pages


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens. `cache_write=None` means the vendor bills cache writes as input."""

    input: float
    output: float
    cache_read: float
    cache_write: float | None = None


# Keys are matched as prefixes of the normalised model name, longest first, so `gpt-4o-mini-2024-07-18`
# finds `gpt-4o-mini` before `gpt-4o`.
PRICES: dict[str, Price] = {
    # Anthropic: cache writes (5-minute TTL) at 1.25x input, cache reads at 0.1x
    "claude-opus-4-5": Price(5.0, 25.0, 0.50, 6.25),
    "claude-opus-4-6": Price(5.0, 25.0, 0.50, 6.25),
    "claude-opus-4-1": Price(15.0, 75.0, 1.50, 18.75),
    "claude-opus-4": Price(15.0, 75.0, 1.50, 18.75),
    "claude-sonnet-4-5": Price(3.0, 15.0, 0.30, 3.75),
    "claude-sonnet-4": Price(3.0, 15.0, 0.30, 3.75),
    "claude-3-7-sonnet": Price(3.0, 15.0, 0.30, 3.75),
    "claude-3-5-sonnet": Price(3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4-5": Price(1.0, 5.0, 0.10, 1.25),
    "claude-3-5-haiku": Price(0.80, 4.0, 0.08, 1.0),
    "claude-3-haiku": Price(0.25, 1.25, 0.03, 0.30),
    # OpenAI: cached input at a discount, no charge for writing the cache
    "gpt-5.2": Price(1.75, 14.0, 0.175),
    "gpt-5.1": Price(1.25, 10.0, 0.125),
    "gpt-5": Price(1.25, 10.0, 0.125),
    "gpt-5-mini": Price(0.25, 2.0, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "gpt-4.1": Price(2.0, 8.0, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-4o": Price(2.50, 10.0, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "o1": Price(15.0, 60.0, 7.50),
    "o3": Price(2.0, 8.0, 0.50),
    "o3-mini": Price(1.10, 4.40, 0.55),
    "o4-mini": Price(1.10, 4.40, 0.275),
    # Google through litellm (prompts up to 200k tokens)
    "gemini-2.5-pro": Price(1.25, 10.0, 0.125),
    "gemini-2.5-flash": Price(0.30, 2.50, 0.03),
}

_ROUTE = re.compile(r"^(litellm/)?(anthropic/|openai/)?")
_DATED = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$")


def normalise(model: str) -> str:
    """`anthropic/claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`; vendor paths such as
    `gemini/` are dropped too, the table is keyed by bare model names."""
    name = _ROUTE.sub("", model.strip().lower())
    name = name.rsplit("/", 1)[-1]
    return _DATED.sub("", name)


def price_for(model: str, own: Mapping[str, Any] | None = None) -> Price | None:
    """`model`'s price: the user's own (`prices:` in config, by model string), else the table, else
    litellm's bundled map; None when none knows it."""
    mine = (own or {}).get(model)
    if mine is not None:
        read = mine.cache_read if mine.cache_read is not None else mine.input
        return Price(mine.input, mine.output, read, mine.cache_write)
    name = normalise(model)
    for key in sorted(PRICES, key=len, reverse=True):
        if name == key or name.startswith(key + "-"):
            return PRICES[key]
    return _litellm_price(model)


def estimate_cost(model: str, usage: Usage, own: Mapping[str, Any] | None = None) -> float | None:
    """Estimated dollars for `usage` on `model`; None when the model has no known price."""
    price = price_for(model, own)
    if price is None:
        return None
    write = price.cache_write if price.cache_write is not None else price.input
    dollars = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * write
    )
    return dollars / 1_000_000


def costs_by_model(by_model: Mapping[str, Usage], own: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Each model's tokens and estimated dollars (None when its price is unknown), for the report
    of a run that more than one model served (fallback models, sub-agents or units of their own)."""
    return {
        model: {**usage.model_dump(), "cost_usd": estimate_cost(model, usage, own)} for model, usage in by_model.items()
    }


def total_cost(per_model: Mapping[str, Mapping[str, Any]]) -> float | None:
    """The sum of the models' costs; None when any of them has no known price (never a guess)."""
    costs = [entry.get("cost_usd") for entry in per_model.values()]
    if not costs or any(c is None for c in costs):
        return None
    return sum(costs)


def run_cost(
    model: str, usage: Usage, by_model: Mapping[str, Usage] | None, own: Mapping[str, Any] | None = None
) -> float | None:
    """A run's cost: at `model`'s price, or each model at its own when others served too (fallback
    models, sub-agents on another model); None when a price is unknown. `own`: the user's prices."""
    if by_model and set(by_model) - {model}:
        return total_cost(costs_by_model(by_model, own))
    return estimate_cost(model, usage, own)


def cache_share(usage: Usage) -> float:
    """The share of input tokens served from cache (0.0 when there was no input)."""
    total = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    return usage.cache_read_tokens / total if total else 0.0


# -- fallback: litellm's bundled price map ------------------------------------------------------


@lru_cache(maxsize=1)
def _litellm_map() -> dict[str, dict]:
    try:
        spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / "model_prices_and_context_window_backup.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _litellm_price(model: str) -> Price | None:
    table = _litellm_map()
    name = _ROUTE.sub("", model.strip())
    entry = table.get(name) or table.get(name.rsplit("/", 1)[-1])
    if not isinstance(entry, dict):
        return None
    try:
        per_token_in = float(entry["input_cost_per_token"])
        per_token_out = float(entry["output_cost_per_token"])
    except (KeyError, TypeError, ValueError):
        return None
    read = entry.get("cache_read_input_token_cost")
    write = entry.get("cache_creation_input_token_cost")
    return Price(
        input=per_token_in * 1e6,
        output=per_token_out * 1e6,
        cache_read=float(read) * 1e6 if read is not None else per_token_in * 1e6,
        cache_write=float(write) * 1e6 if write is not None else None,
    )

"""How many tokens each model's context holds: config override > litellm's model info (for a
`litellm/` model, whose run has imported litellm; never imported just for this) > the table below >
default. A model another provider serves always takes the table's figure: asking litellm whenever it
happened to be imported made one model's window change within a process (a fallback to a litellm model
turned `openai/gpt-5` from 400k into 272k mid-run).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

DEFAULT_WINDOW = 128_000
OFFLINE_WINDOW = 200_000

# Longest prefix wins; names are matched without the provider prefix (`anthropic/`, `openai/`, ...).
WINDOWS: dict[str, int] = {
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3-7": 200_000,
    "claude-3-5": 200_000,
    "claude-3": 200_000,
    "claude": 200_000,
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gemini-2.5": 1_048_576,
    "gemini-1.5-pro": 2_097_152,
    "gemini": 1_048_576,
    "deepseek": 128_000,
    "mistral-large": 128_000,
    "llama-3": 128_000,
    "qwen": 131_072,
    "offline": OFFLINE_WINDOW,
    "scripted": OFFLINE_WINDOW,
}


def bare_name(model: str) -> str:
    return (
        model.split("/", 1)[1]
        if model.split("/", 1)[0] in {"anthropic", "openai", "litellm"} and "/" in model
        else model
    )


def _from_litellm(model: str) -> int | None:
    litellm = sys.modules.get("litellm")
    if litellm is None or not model.startswith("litellm/"):
        return None
    try:
        info = litellm.get_model_info(model.split("/", 1)[1])
    except Exception:  # noqa: BLE001 - litellm raises many kinds for an unknown model
        return None
    value = (info or {}).get("max_input_tokens") or (info or {}).get("max_tokens")
    return int(value) if isinstance(value, int) and value > 0 else None


def context_window(model: str, overrides: Mapping[str, int] | None = None, window: int | None = None) -> int:
    """Tokens the model can read. `window` (config `context.window`) wins, then a per-model override
    (`context.windows: {model: tokens}`, exact string or bare name), then litellm for a `litellm/`
    model, then the table."""
    if window:
        return int(window)
    overrides = overrides or {}
    bare = bare_name(model)
    for key in (model, bare):
        if key in overrides:
            return int(overrides[key])
    found = _from_litellm(model)
    if found:
        return found
    lowered = bare.lower()
    for prefix in sorted(WINDOWS, key=len, reverse=True):
        if lowered.startswith(prefix):
            return WINDOWS[prefix]
    return DEFAULT_WINDOW

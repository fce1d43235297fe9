"""Model string → provider (docs/architecture.md section 5): the one factory every provider of a run comes from.

`anthropic/<model>`, `openai/<model>`, `litellm/<anything litellm routes>`, `offline`; a bare name
resolves by prefix: `claude-*` → anthropic, `gpt-*` and `o1*`/`o3*`/`o4*` (any `o<digit>`) → openai.
`make_provider` is `PipelineDeps.provider_factory`'s default; the run hands it (wrapped for
`--record`/`--replay`) to every part that asks a model: the turn loop, plan units, the compaction
summariser, validator judges, the learning proposer, sub-agents and fallback models. An `openai/…`
model speaks the Responses API to OpenAI itself and Chat Completions to a compatible server
(config `openai.api` forces one). Nothing here imports an SDK: the
adapters do that on their first call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arreio.engine.core.config import OpenAISettings
from arreio.engine.core.errors import ConfigError, UsageError
from arreio.engine.core.ports import Provider

if TYPE_CHECKING:
    from arreio.engine.providers.anthropic import AnthropicProvider
    from arreio.engine.providers.litellm import LiteLLMProvider
    from arreio.engine.providers.openai import OpenAIProvider

OFFLINE = "offline"
ProviderFactory = Callable[..., Provider]
PROVIDERS = ("anthropic", "openai", "litellm", "offline")
ACCEPTED_FORMS = (
    "anthropic/<model>, openai/<model>, litellm/<vendor>/<model>, offline (or a bare claude-*, gpt-*, o1*/o3*/o4* name)"
)

KEY_VARS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}

# the key variable litellm itself reads for the common vendors; checked up front so a missing key
# is a clear exit 5 before the run starts, not a vendor's 401 after it
LITELLM_KEY_VARS = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "xai": "XAI_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "cohere": "COHERE_API_KEY",
}

_OPENAI_BARE = re.compile(r"^(gpt-|chatgpt-|o\d)")


def parse_model(model_string: str) -> tuple[str, str]:
    """`(provider, bare model)` for a model string; ConfigError (exit 5) naming the accepted forms."""
    text = (model_string or "").strip()
    if text.lower() == "offline":
        return "offline", "offline"
    head, sep, rest = text.partition("/")
    if sep:
        provider = head.lower()
        if provider in ("anthropic", "openai", "litellm"):
            if not rest.strip("/ "):
                raise ConfigError(f"model {model_string!r} names no model after {head}/; use {ACCEPTED_FORMS}")
            return provider, rest.strip()
        raise ConfigError(f"unknown provider {head!r} in model {model_string!r}; use {ACCEPTED_FORMS}")
    lowered = text.lower()
    if lowered.startswith("claude-"):
        return "anthropic", text
    if _OPENAI_BARE.match(lowered):
        return "openai", text
    raise ConfigError(f"unknown model {model_string!r}; use {ACCEPTED_FORMS}")


def _key(env: Mapping[str, str], var: str, model_string: str) -> str:
    value = (env.get(var) or "").strip()
    if not value:
        raise ConfigError(
            f"model {model_string!r} needs an API key: set {var} "
            "(any non-empty value works for a local server that checks none)"
        )
    return value


# With no model configured anywhere, a provider's key in the environment says which model the user
# means: running the offline model beside a set ANTHROPIC_API_KEY did nothing and called it done.
KEY_CHOSEN_MODELS = (("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"), ("OPENAI_API_KEY", "openai/gpt-5"))


def model_for(settings: Any, env: Mapping[str, str]) -> tuple[str, str | None]:
    """The model a run uses, and why when arreio chose it: the configured one (a config file,
    ARREIO_MODEL, --model, --offline), else the model of the first provider whose API key is set
    (not the OpenAI one while OPENAI_BASE_URL points elsewhere: that is a server whose models the
    user names), else the offline model."""
    if "model" in settings.model_fields_set:
        return settings.model, None
    for var, model in KEY_CHOSEN_MODELS:
        if var == "OPENAI_API_KEY" and (env.get("OPENAI_BASE_URL") or "").strip():
            continue
        if (env.get(var) or "").strip():
            return model, f"no model configured; {var} is set"
    return settings.model, None


def is_offline(model: str) -> bool:
    return model == OFFLINE or model.startswith(OFFLINE + "/")


def check_model(model: str) -> None:
    """Fail fast (before a session is created) on a model string nothing can serve."""
    if not is_offline(model):
        parse_model(model)


def make_provider(
    model: str,
    *,
    env: Mapping[str, str],
    base_url: str | None = None,
    session_id: str | None = None,
    script: Path | None = None,
    script_first_turn: int = 0,
    openai: OpenAISettings | None = None,
) -> Provider:
    """The provider for `model`: a `--script` (offline only), the offline model, or a vendor adapter.
    `openai`: the config's `openai.*` section (which API an `openai/…` model is spoken to through)."""
    if script is not None:
        if not is_offline(model):
            raise UsageError(f"--script plays an offline script; it cannot be combined with --model {model}")
        from arreio.engine.providers.scripted import ScriptedProvider, load_script

        return ScriptedProvider.from_script(load_script(script), first_turn=script_first_turn)
    if is_offline(model):
        from arreio.engine.providers.offline.model import OfflineProvider

        return OfflineProvider()
    return _vendor_provider(model, env=env, base_url=base_url, session_id=session_id, openai=openai)


def _vendor_provider(
    model_string: str,
    *,
    env: Mapping[str, str],
    base_url: str | None = None,
    session_id: str | None = None,
    openai: OpenAISettings | None = None,
) -> AnthropicProvider | OpenAIProvider | LiteLLMProvider:
    """The adapter for a vendor model string, its key read from `env`. Without `base_url` the SDK
    honours its own ANTHROPIC_BASE_URL / OPENAI_BASE_URL."""
    provider, model = parse_model(model_string)
    if provider == "anthropic":
        from arreio.engine.providers.anthropic import AnthropicProvider

        key = _key(env, KEY_VARS["anthropic"], model_string)
        return AnthropicProvider(model, api_key=key, base_url=base_url, session_id=session_id)
    if provider == "openai":
        from arreio.engine.providers.openai import OpenAIProvider
        from arreio.engine.providers.openai_responses import ResponsesOptions

        key = _key(env, KEY_VARS["openai"], model_string)
        chosen = openai or OpenAISettings()
        options = ResponsesOptions(reasoning_summary=chosen.reasoning_summary, reasoning_effort=chosen.reasoning_effort)
        return OpenAIProvider(
            model, api=chosen.api, responses=options, api_key=key, base_url=base_url, session_id=session_id
        )
    from arreio.engine.providers.litellm import LiteLLMProvider

    vendor = model.split("/", 1)[0].lower() if "/" in model else ""
    var = LITELLM_KEY_VARS.get(vendor)
    key: str | None = None
    if var:
        # a local server behind base_url may check no key at all
        key = (env.get(var) or "").strip() or None
        if key is None and base_url is None:
            key = _key(env, var, model_string)
    return LiteLLMProvider(model, api_key=key, base_url=base_url, session_id=session_id)

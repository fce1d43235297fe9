"""The context window a run works with, per model: the config's (`context.window`, `context.windows`),
else what the model's server says (asked once per run and model, from the disk cache when it was asked
lately: engine/providers/server_window.py), else litellm's model info and the table (window.py).

A server that does not say (an unreachable endpoint, a server with no such endpoint) is a warning,
never an error: the run goes on with the table's guess and says which number it uses. A refusal of a
too-long request that names the window (`ProviderError.window`) corrects it for the rest of the run
and the next runs (`learn`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from arreio.engine.context.window import bare_name, context_window
from arreio.engine.core import events as ev
from arreio.engine.providers.server_window import api_root, endpoint_to_ask, learn_window, server_window

if TYPE_CHECKING:
    from arreio.engine.context.settings import ContextSettings
    from arreio.engine.core.model_io import ModelRequest


class RunWindows:
    """One run's windows, per model (the run's own, a fallback's, a sub-agent's)."""

    def __init__(self, cfg: ContextSettings, env: Mapping[str, str], base_url: str | None) -> None:
        self.cfg, self.env, self.base_url = cfg, env, base_url
        self.served: dict[str, int | None] = {}  # model -> the server's window (None: it did not say)

    def configured(self, model: str) -> bool:
        return bool(self.cfg.window) or any(k in self.cfg.windows for k in (model, bare_name(model)))

    async def ensure(self, model: str) -> list[ev.Event]:
        """Ask `model`'s server once per run (in a thread: the probe is blocking HTTP, bounded); the
        warning when it did not say."""
        if model in self.served or self.configured(model) or endpoint_to_ask(model, self.env, self.base_url) is None:
            self.served.setdefault(model, None)
            return []
        found = await asyncio.to_thread(server_window, model, self.env, self.base_url)
        self.served[model] = found.window if found is not None else None
        if found is None or found.window:  # (a cached "did not say" is said again: every run says its number)
            return []
        url = api_root(endpoint_to_ask(model, self.env, self.base_url) or "")
        guess = self.window(model)
        return [
            ev.Warning_(
                code="window_unknown",
                message=(
                    f"{url} did not say {model}'s context window ({found.error}); working with {guess:,} tokens from "
                    "arreio's model table: set context.window to the server's (llama-server -c, Ollama num_ctx)"
                ),
            )
        ]

    def window(self, model: str) -> int:
        if self.configured(model):
            return context_window(model, self.cfg.windows, self.cfg.window)
        return self.served.get(model) or context_window(model, self.cfg.windows, self.cfg.window)

    def learn(self, model: str, window: int) -> None:
        """A refusal named the window: use it from now on, and keep it for the next runs."""
        if self.configured(model) or window <= 0:
            return
        self.served[model] = window
        learn_window(model, self.env, self.base_url, window, "the server's refusal of a too-long request")


MIN_REPLY_CAP = 256  # less room than this: the prompt itself is at the window's edge (compaction's case)


def fit_reply_cap(request: ModelRequest, window: int, prompt_tokens: int) -> int:
    """The reply cap to send: the configured one, or less when the prompt leaves less room in the window.
    An 8,192-token server asked for 8,192 more tokens on every step let a degenerate reply run to the
    window (25 minutes at 5 tokens/s); vLLM refuses such a request outright. The estimate's error is
    covered by a tenth of the prompt; a thinking budget keeps its cap (it must stay below it). The cap
    is never raised: a user's own cap below `MIN_REPLY_CAP` is sent as configured."""
    room = window - prompt_tokens - (prompt_tokens // 10 + 64)
    cap = min(request.max_tokens, max(MIN_REPLY_CAP, room))
    if isinstance(request.thinking, int) and cap <= request.thinking:
        return request.max_tokens
    return cap

"""Fallback models (config `fallback_models`, `arreio run --fallback-model`): what a run does when
its model keeps failing.

When a model call still fails after the harness's retries and the failure is of a retryable class
(overloaded, 5xx, a rate limit whose wait is past `retry.retry_after_max_s`, a cut stream), the step
is tried again on the next model of the chain, with retries of its own; that model then serves the
rest of the run: the model that failed is *retired*, and a unit or sub-agent that asks for it later
gets its replacement. A refusal of the request itself — auth, a bad request, a context that no longer
fits — is the same on any model and never switches.

The history is not rewritten: every assistant message keeps the model that produced it, so each
adapter applies the thinking rule (`providers/thinking.py`) to the new model: the previous model's
signed thinking and encrypted reasoning are downgraded to text or dropped, never sent as they are.
Pure bookkeeping; the provider of a model comes from the run's one `provider_factory`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from arreio.engine.core.model_io import ProviderError
from arreio.engine.providers.thinking import same_model

if TYPE_CHECKING:
    from arreio.engine.core.ports import Provider
    from arreio.engine.tools.run_context import RunContext


def may_switch(error: ProviderError) -> bool:
    """Only a failure another model may not have: never auth, a refused request, or an overflow."""
    return error.kind == "retryable"


@dataclass
class Fallback:
    """The run's chain of fallback models, and which models it has retired (shared by the run's
    runner and its sub-agents' runners, so a switch holds for the rest of the run)."""

    models: list[str] = field(default_factory=list)
    make: Callable[[str], Provider] | None = None
    retired: dict[str, tuple[str, Provider]] = field(default_factory=dict)  # failed model -> replacement
    _used: set[str] = field(default_factory=set)

    @classmethod
    def for_run(cls, ctx: RunContext) -> Fallback:
        def make(model: str) -> Provider:
            return ctx.provider_factory(model, env=ctx.env, base_url=ctx.settings.base_url, session_id=ctx.session_id)

        return cls(models=list(ctx.settings.fallback_models), make=make)

    def next(self, failed: str) -> tuple[str, Provider] | None:
        """The model (and its provider) that takes over from `failed`, or None when the chain is
        spent. The same model twice in the chain, or the failed model itself, is skipped."""
        self._used.add(failed)
        for model in self.models:
            if model in self._used or any(same_model(model, used) for used in self._used):
                continue
            if self.make is None:
                return None
            self._used.add(model)
            provider = self.make(model)
            self.retired[failed] = (model, provider)
            # a model retired earlier now points at the newest replacement too
            for old, (to, _) in list(self.retired.items()):
                if to == failed:
                    self.retired[old] = (model, provider)
            return model, provider
        return None

    def route(self, model: str, provider: Provider) -> tuple[str, Provider]:
        """The model (and provider) that serves a step asked of `model`: its replacement once retired."""
        return self.retired.get(model, (model, provider))

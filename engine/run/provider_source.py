"""Where a run's providers come from: `deps.provider_factory`, a cassette served back (`--replay`), or
every provider made recorded into one cassette (`--record`)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arreio.engine.core.config import OpenAISettings, Settings
from arreio.engine.core.ports import Clock, Provider
from arreio.engine.providers.recorder import RecordingProvider
from arreio.engine.providers.registry import ProviderFactory
from arreio.engine.providers.replay import ReplayProvider
from arreio.engine.walls.redact import Redactor

if TYPE_CHECKING:
    from arreio.engine.run.prepare import PipelineDeps, RunOptions


def run_factory(
    options: RunOptions, deps: PipelineDeps, redactor: Redactor, settings: Settings | None = None
) -> tuple[ProviderFactory, Any]:
    """Where every provider of this run comes from (and the replay, if any): `deps.provider_factory`,
    or with `--replay` the cassette (each call, whoever asks — a unit, the summariser, a judge, the
    proposer, a sub-agent — is served the next recorded one); with `--record` each provider made is
    recorded into the one cassette, in the order the run calls them (a replay re-recorded too)."""
    factory: ProviderFactory = deps.provider_factory
    if settings is not None and settings.openai != OpenAISettings():  # `openai.*` set: every provider made gets it
        factory = functools.partial(factory, openai=settings.openai)
    replay = None
    if options.replay is not None:
        replay = ReplayProvider(options.replay, strict=options.replay_mode == "strict", redactor=redactor)
        factory = _Serving(replay)
    if options.record is not None:
        factory = _Recording(factory, options.record, redactor, deps.clock, durable=settings is None or settings.fsync)
    return factory, replay


class _Serving:
    """A factory that serves every request from one replay."""

    def __init__(self, replay: Provider) -> None:
        self.replay = replay

    def __call__(self, model: str, **_: Any) -> Provider:
        return self.replay


class _Recording:
    """A factory whose providers all record into one cassette (opened by the first provider made,
    the run's own, whose model the cassette is stamped with)."""

    def __init__(self, inner: ProviderFactory, path: Path, redactor: Redactor, clock: Clock, durable: bool) -> None:
        self.inner, self.path, self.redactor, self.clock, self.durable = inner, path, redactor, clock, durable
        self.first: Any = None

    def __call__(self, model: str, **kwargs: Any) -> Provider:
        fresh = self.inner(model, **kwargs)
        if self.first is None:
            self.first = RecordingProvider(
                fresh, self.path, model=model, redactor=self.redactor, clock=self.clock, durable=self.durable
            )
            return self.first
        return self.first.wrap(fresh)

"""`--replay FILE`: serve a run's model calls from a cassette. Part of the offline family: no network,
no key, $0, the same stream every time.

Each request is matched to the next recorded call, in order. The request's fingerprint is checked
against the recorded one:

- strict: a mismatch ends the run — `Done(error=fatal)` whose message says what changed ("the
  request to the model changed: the system prompt's block 'memory' differs") — a regression signal;
- lenient: the recorded reply is served by order anyway and the mismatch becomes a warning
  (`warnings`, which the pipeline surfaces as `warning` events when the run ends).

Recorded faults are served as recorded (a 429 replays as a 429), so the runner's retry path runs
again. Tool calls in the replies are executed for real by the runner: file effects, gates and the
learning pass behave as in the recorded run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from arreio.engine.core.model_io import Done, ModelRequest, ProviderError, StreamEvent
from arreio.engine.providers.cassette import (
    canonical_request,
    diff_requests,
    fingerprint,
    load_cassette,
    request_digest,
)
from arreio.engine.walls.redact import CASSETTE, Redactor


class ReplayProvider:
    """Plays the cassette at `path`. `recorded_model` is the model the cassette was recorded with;
    `redactor` (the run's) redacts the same secrets the recorder redacted before hashing."""

    name = "replay"

    def __init__(self, path: Path, *, strict: bool = True, redactor: Redactor | None = None) -> None:
        self.cassette = load_cassette(Path(path))
        self.recorded_model = self.cassette.header.model
        self.strict = strict
        self.redactor = (redactor or Redactor()).labelled(CASSETTE)
        self.served = 0
        self.failed = False  # a strict mismatch (or running out) ended the run
        self._warnings: list[str] = [f"cassette {path}: {p}" for p in self.cassette.problems]

    @property
    def warnings(self) -> list[str]:
        """Mismatches served leniently, plus recorded calls the run never asked for."""
        out = list(self._warnings)
        left = len(self.cassette.calls) - self.served
        if left > 0 and not self.failed:
            out.append(
                f"the run made {self.served} model call(s); the cassette holds {len(self.cassette.calls)} "
                f"({left} not replayed) — the run took a different path than the recording"
            )
        return out

    def _fail(self, message: str) -> Done:
        self.failed = True
        return Done(stop_reason="error", error=ProviderError(kind="fatal", message=message))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        calls = self.cassette.calls
        index = self.served
        if index >= len(calls):
            yield self._fail(
                f"the cassette ran out: the run asked for model call {index + 1}, only {len(calls)} were recorded"
            )
            return
        self.served += 1
        call = calls[index]
        canonical = canonical_request(request, self.redactor)
        if fingerprint(canonical) != call.fingerprint:
            changes = diff_requests(call.request, request_digest(canonical)) or [
                "its fingerprint differs (the cassette may come from an arreio that normalised requests differently)"
            ]
            message = f"the request to the model changed: {'; '.join(changes)} (call {index + 1} of {len(calls)})"
            if self.strict:
                yield self._fail(message)
                return
            self._warnings.append(f"{message}; lenient replay served the recorded reply by order")
        for event in call.events:
            yield event.model_copy(deep=True)

"""`--record FILE`: a provider that wraps the run's real one and writes every call to a cassette.

Transparent: the runner sees exactly the inner provider's stream, event by event, as it arrives.
When a call's stream has ended (its `Done` passed on), the call is appended to the cassette — its
request fingerprint and part digests, the events in order, the usage, and the fault when the call
failed (a 429, a 500, a cut stream), so a replay walks the same retry path. A stream abandoned midway
(Ctrl-C) is not written: the runner does not keep it either. See `engine/providers/cassette.py` for the format.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from arreio.engine.core.ids import iso_ms
from arreio.engine.core.model_io import Done, ModelRequest, StreamEvent, Usage
from arreio.engine.core.ports import Clock, Provider, SystemClock
from arreio.engine.providers.cassette import (
    CassetteCall,
    CassetteHeader,
    CassetteWriter,
    canonical_request,
    fingerprint,
    request_digest,
)
from arreio.engine.walls.redact import CASSETTE, Redactor


def _arreio_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arreio")
    except PackageNotFoundError:
        return ""


class RecordingProvider:
    """Records `inner`'s calls to the cassette at `path` (replaced if it exists). `redactor` is the
    run's (the cassette writes its own labels); `model` is the model string the run uses (replay stamps
    runs with it). `wrap` records another provider of the same run into the same cassette."""

    def __init__(
        self,
        inner: Provider,
        path: Path,
        *,
        model: str,
        redactor: Redactor,
        clock: Clock | None = None,
        durable: bool = True,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = model
        self.redactor = redactor.labelled(CASSETTE)
        now = (clock or SystemClock()).now()
        header = CassetteHeader(model=model, created_at=iso_ms(now), arreio=_arreio_version())
        self.writer = CassetteWriter(Path(path), header, self.redactor, durable=durable)

    def wrap(self, inner: Provider) -> RecordingProvider:
        """Another provider of this run (a plan unit's, the summariser's, a judge's), recorded into the
        same cassette, call after call, in the order the run makes them."""
        other = RecordingProvider.__new__(RecordingProvider)
        other.inner, other.name, other.model = inner, inner.name, self.model
        other.redactor, other.writer = self.redactor, self.writer
        return other

    @property
    def warnings(self) -> list[str]:
        """A replay being re-recorded keeps reporting its warnings."""
        return list(getattr(self.inner, "warnings", None) or [])

    @property
    def calls(self) -> int:
        return self.writer.calls

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        canonical = canonical_request(request, self.redactor)
        events: list[StreamEvent] = []
        done: Done | None = None
        async for event in self.inner.stream(request):
            events.append(event)
            if isinstance(event, Done):
                done = event
            yield event
        # The stream ran to its end (a `Done` or, against the protocol, none): record it as it was.
        self.writer.append(
            CassetteCall(
                n=self.writer.calls + 1,
                fingerprint=fingerprint(canonical),
                request=request_digest(canonical),
                events=events,
                usage=done.usage if done else Usage(),
                stop_reason=done.stop_reason if done else None,
                fault=done.error if done else None,
            )
        )

"""Redacting a stream as it arrives: the `DeltaGuard` between the model's deltas and
every writer. Split from `redact.py`, whose one redactor it uses."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from arreio.engine.walls.redact import Redactor
from arreio.engine.walls.secret_patterns import ASCII_ALIKE, PEM_END

__all__ = ["DeltaGuard"]

_HEAD = 32  # the starts of leads kept whole in a set; a longer lead is found by its first this many


@lru_cache(maxsize=8)
def _compile_partial(pattern: str) -> Any:
    """The same pattern in the `regex` module, which can tell a match cut short by the end of the
    text (a secret still arriving) from no match; there a private key lasts until its END line.
    Compiled when a text first holds a lead (~60-80 ms, the `regex` module's import included): a
    run whose streamed text never does — and every run's start — does not pay for it."""
    import regex  # noqa: PLC0415 - see above

    return regex.compile(pattern.replace(PEM_END + "?", PEM_END))


class DeltaGuard:
    """Streamed text arrives in pieces, and a secret can straddle two of them. The guard holds back
    the unfinished last word of the text and thinking streams, and anything that may be the start of
    a secret (`Bearer `, `password: "`, an open private-key block: a partial match of the redactor's
    pattern), and releases it, redacted, once it is complete or any other event arrives. Every
    `text_delta` and `thinking_delta` that `feed` and `flush` return carries redacted text (the
    pipeline does not scan their lines again)."""

    STREAMS = ("text_delta", "thinking_delta")
    MAX_HELD = 8192  # a run this long is released anyway (a pathological stream)

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._held: dict[str, Any] = {}  # stream type -> last event of it, carrying the held text
        self._compiled: Any = None  # the partial pattern, when a text first needs it (`_partial`)
        self._leads = redactor._leads
        # What the end of a text can hold of a lead still arriving (`Bear`, `-----BE`, an API key's
        # first letters): every start up to `_HEAD` characters; a longer one (of a long environment
        # secret: a private key's) is looked up by its first `_HEAD` and then compared whole.
        self._lead_starts = frozenset(lead[:n] for lead in self._leads for n in range(1, min(len(lead), _HEAD) + 1))
        self._long_leads: dict[str, list[str]] = {}
        for lead in self._leads:
            if len(lead) > _HEAD:
                self._long_leads.setdefault(lead[:_HEAD], []).append(lead)
        self._longest = max(map(len, self._leads))

    def feed(self, event: Any) -> list[Any]:
        kind = getattr(event, "type", "")
        if kind not in self.STREAMS:  # whole events are redacted where they are written
            return [*self.flush(), event] if self._held else [event]
        out = [e for other in self.STREAMS if other != kind for e in self._release(other)]
        held = self._held.pop(kind, None)
        text = (held.text if held is not None else "") + event.text
        cut = max(text.rfind(c) for c in " \n\t\r") + 1
        if held is not None and (
            not any(c in event.text for c in " \n\t\r")
            or (held.text.startswith("-----BEGIN") and "-----END" not in text)
        ):
            cut = 0  # what was held stays held until a blank (a key's END) arrives: a wait, not a rescan
        # Never cut inside a match, nor release the start of one that reaches the end of the text
        # (complete or not, it may go on: `Bearer ` then the token, a key's next line).
        for match in self._matches(text) if cut else ():
            if match.start() < cut and (cut < match.end() or match.end() == len(text)):
                cut = match.start()
        # So is another spelling of an environment secret, and the start of one the text's end cuts
        # short (a key echoed in two halves: the first half waits for the second).
        for span in self.redactor.spelled(text[:cut], partial=True) if cut else ():
            if cut < span.end or span.end == cut:
                cut = span.start
                break
        if len(text) - cut > self.MAX_HELD:
            cut = len(text)
        if cut:
            out.append(event.model_copy(update={"text": self.redactor.text(text[:cut])}))
        if cut < len(text):
            self._held[kind] = event.model_copy(update={"text": text[cut:]})
        return out

    @property
    def _partial(self) -> Any:
        if self._compiled is None:
            self._compiled = _compile_partial(self.redactor._pattern.pattern)
        return self._compiled

    def _matches(self, text: str) -> list[Any]:
        """What `finditer(text, partial=True)` gives, tried only where a match can begin: where a
        lead of the redactor's pattern is (`Redactor.text` does the same), or where the text ends in
        the first letters of one. Scanning every position took ~1.2 µs a character (~40
        alternatives tried at each), for every delta of every streamed reply."""
        if not text.isascii() and any(c in text for c in ASCII_ALIKE):
            return list(self._partial.finditer(text, partial=True))  # see `Redactor.text`
        lowered, starts = text.lower(), set()
        for lead in self._leads:
            at = lowered.find(lead)
            while at >= 0:
                starts.add(at)
                at = lowered.find(lead, at + 1)
        end = len(text)
        for at in range(max(0, end - self._longest), end):
            if end - at <= _HEAD:
                if lowered[at:] in self._lead_starts:
                    starts.add(at)
            elif (longer := self._long_leads.get(lowered[at : at + _HEAD])) and any(
                lead.startswith(lowered[at:]) for lead in longer
            ):
                starts.add(at)
        if not starts:
            return []
        # A scan's search returns the first complete match after the last one, and only when there
        # is none the first partial one (which runs to the end: the scan stops there).
        pending, found = sorted(starts), []
        while True:
            match = next((m for at in pending if (m := self._partial.match(text, at)) is not None), None)
            if match is None:
                tries = (self._partial.match(text, at, partial=True) for at in pending)
                partial = next((m for m in tries if m is not None), None)
                return found if partial is None else [*found, partial]
            found.append(match)
            pending = [at for at in pending if at >= match.end()]

    def flush(self) -> list[Any]:
        return [e for kind in self.STREAMS for e in self._release(kind)]

    def _release(self, kind: str) -> list[Any]:
        held = self._held.pop(kind, None)
        if held is None:
            return []
        return [held.model_copy(update={"text": self.redactor.text(held.text)})]

"""Redacting a stream as it arrives (issue 9): the `DeltaGuard` between the model's deltas and
every writer. Split from `redact.py`, whose one redactor it uses."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import regex

from arreio.engine.governance.redact import _PEM_END, Redactor

__all__ = ["DeltaGuard"]


@lru_cache(maxsize=8)
def _partial(pattern: str) -> Any:
    """The same pattern in the `regex` module, which can tell a match cut short by the end of the
    text (a secret still arriving) from no match; there a private key lasts until its END line."""
    return regex.compile(pattern.replace(_PEM_END + "?", _PEM_END))


class DeltaGuard:
    """Streamed text arrives in pieces, and a secret can straddle two of them. The guard holds back
    the unfinished last word of the text and thinking streams, and anything that may be the start of
    a secret (`Bearer `, `password: "`, an open private-key block: a partial match of the redactor's
    pattern), and releases it, redacted, once it is complete or any other event arrives."""

    STREAMS = ("text_delta", "thinking_delta")
    MAX_HELD = 8192  # a run this long is released anyway (a pathological stream)

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._partial = _partial(redactor._pattern.pattern)
        self._held: dict[str, Any] = {}  # stream type -> last event of it, carrying the held text

    def feed(self, event: Any) -> list[Any]:
        kind = getattr(event, "type", "")
        if kind not in self.STREAMS:  # whole events are redacted where they are written
            return [*self.flush(), event] if self._held else [event]
        out = [e for other in self.STREAMS if other != kind for e in self._release(other)]
        held = self._held.pop(kind, None)
        text = (held.text if held is not None else "") + event.text
        cut = max(text.rfind(c) for c in " \n\t\r") + 1
        if held is not None and (not any(c in event.text for c in " \n\t\r")
                                 or (held.text.startswith("-----BEGIN") and "-----END" not in text)):
            cut = 0  # what was held stays held until a blank (a key's END) arrives: a wait, not a rescan
        # Never cut inside a match, nor release the start of one that reaches the end of the text
        # (complete or not, it may go on: `Bearer ` then the token, a key's next line).
        for match in self._partial.finditer(text, partial=True) if cut else ():
            if match.start() < cut and (cut < match.end() or match.end() == len(text)):
                cut = match.start()
        if len(text) - cut > self.MAX_HELD:
            cut = len(text)
        if cut:
            out.append(event.model_copy(update={"text": self.redactor.text(text[:cut])}))
        if cut < len(text):
            self._held[kind] = event.model_copy(update={"text": text[cut:]})
        return out

    def flush(self) -> list[Any]:
        return [e for kind in self.STREAMS for e in self._release(kind)]

    def _release(self, kind: str) -> list[Any]:
        held = self._held.pop(kind, None)
        if held is None:
            return []
        return [held.model_copy(update={"text": self.redactor.text(held.text)})]

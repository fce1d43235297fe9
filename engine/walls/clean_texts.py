"""Texts a redactor found no secret in, remembered so the same text object is not scanned again
(a tool result is redacted on its way into the history, and again when pruning saves it
to the artifacts file a hundred turns later — 45 substring searches of 2 KB each time)."""

from __future__ import annotations

import threading

__all__ = ["CleanTexts"]


class CleanTexts:
    """Remembered by identity: a `str` never changes, and a redactor's verdict depends on the text
    alone, so the same object is clean again. Holding each text keeps its id from being reused
    while it is remembered. Texts under `min_chars` are not worth it; past `max_chars` in all, the
    oldest are forgotten first."""

    def __init__(self, *, max_chars: int = 8_000_000, min_chars: int = 256) -> None:
        self.max_chars, self.min_chars = max_chars, min_chars
        self._texts: dict[int, str] = {}  # insertion order: oldest first
        self._chars = 0
        self._lock = threading.Lock()  # a redactor may be used from a tool's worker thread

    def holds(self, text: str) -> bool:
        return self._texts.get(id(text)) is text

    def add(self, text: str) -> None:
        if len(text) < self.min_chars or len(text) > self.max_chars:
            return
        with self._lock:
            if self._texts.get(id(text)) is text:
                return
            self._texts[id(text)] = text
            self._chars += len(text)
            while self._chars > self.max_chars:
                oldest = next(iter(self._texts))
                self._chars -= len(self._texts.pop(oldest))

    def __len__(self) -> int:
        return len(self._texts)

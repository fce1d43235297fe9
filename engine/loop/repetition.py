"""A reply that repeats itself (pure): a small model caught in a loop writes the same sentence until
the reply cap — on a CPU at 5 tokens/s, 25 minutes of "The answer is 42. The answer is 42. …".

`Repetition.feed(text)` is told each piece of a streamed reply; it looks at the reply's end every
`CHECK_EVERY` characters and returns the failure once the reply ends in one piece of at most
`MAX_PERIOD` characters written back to back over at least `MIN_SPAN` characters and `MIN_TIMES` times.
Closed set, backs off on doubt (invariant 9): a table, a list or code repeats a shape, never the same
1,600 characters verbatim, so an honest reply does not reach it.
"""

from __future__ import annotations

MAX_PERIOD = 400
MIN_TIMES = 8
MIN_SPAN = 1600
CHECK_EVERY = 256


def repeated_end(text: str) -> tuple[int, int] | None:
    """`(period, times)` when `text` ends in one piece of `period` characters written `times` times back
    to back over at least MIN_SPAN characters (and MIN_TIMES times); None otherwise."""
    n = len(text)
    for period in range(1, MAX_PERIOD + 1):
        span = max(MIN_SPAN, period * MIN_TIMES)
        if span > n:
            return None
        # periodic over the last `span` characters: each character equals the one `period` before it
        if text[n - span : n - period] == text[n - span + period :]:
            start = n - span
            while start > 0 and text[start - 1] == text[start - 1 + period]:  # how far back it goes (only once found)
                start -= 1
            return period, (n - start) // period
    return None


class Repetition:
    """Watches one streamed reply (its text and its thinking, each on its own)."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._checked: dict[str, int] = {}

    def feed(self, piece: str, kind: str = "text") -> str | None:
        """The failure message once the reply of this `kind` repeats itself, else None."""
        text = self._texts[kind] = self._texts.get(kind, "") + piece
        if len(text) - self._checked.get(kind, 0) < CHECK_EVERY:
            return None
        self._checked[kind] = len(text)
        found = repeated_end(text[-(MAX_PERIOD * MIN_TIMES + MIN_SPAN) :])
        if found is None:
            return None
        period, times = found
        unit = " ".join(text[-period:].split())[:60]
        what = "reasoning" if kind == "thinking" else "reply"
        return (
            f"the model's {what} repeated itself ({period} characters written {times} times over: {unit!r}); "
            f"it was stopped after {len(text):,} characters and the step failed"
        )

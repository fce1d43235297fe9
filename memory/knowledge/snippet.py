"""The part of a hit to show: where the query's words are, not just the chunk's first lines."""

from __future__ import annotations

from arreio.memory.knowledge import cjk


def around_match(text: str, query: str, width: int) -> str:
    """At most `width` characters of `text`, starting a little before the first place a query term
    occurs (the start when none does, e.g. a purely semantic hit); `…` marks what was cut."""
    if len(text) <= width:
        return text
    folded = cjk.normalize(text).casefold()
    found = [i for i in (folded.find(term) for term in cjk.query_terms(query)) if i >= 0]
    # normalising may change lengths (ligatures, full-width forms): positions are near enough for a window
    first = min(found) if found else 0
    start = max(0, min(first - width // 5, len(text) - width))
    piece = text[start : start + width]
    return ("… " if start else "") + piece + (" …" if start + width < len(text) else "")

"""Cutting a document into chunks on line boundaries.

A chunk never splits a line, prefers to end at a blank line (a paragraph, a function, a list), and
repeats a few lines of its predecessor so a sentence that straddles a cut is whole in one of them.
Line numbers are 1-based and inclusive, as editors show them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ChunkConfig:
    """`max_chars`/`max_lines` bound a chunk (one over-long line still makes a chunk on its own);
    `overlap_lines` lines are repeated at the start of the next chunk."""

    max_chars: int = 1500
    max_lines: int = 40
    overlap_lines: int = 2

    def __post_init__(self) -> None:
        if self.max_chars < 1 or self.max_lines < 1:
            raise ValueError("chunk bounds must be positive")
        if not 0 <= self.overlap_lines < self.max_lines:
            raise ValueError("overlap_lines must be >= 0 and smaller than max_lines")


@dataclass(frozen=True)
class Chunk:
    text: str
    start_line: int
    end_line: int


def _window_end(lines: list[str], start: int, config: ChunkConfig) -> int:
    """Exclusive end of the largest window from `start` within the bounds, pulled back to just
    after a blank line when one sits in the window's second half."""
    size = 0
    end = start
    while end < len(lines) and end - start < config.max_lines:
        added = len(lines[end]) + 1
        if end > start and size + added > config.max_chars:
            break
        size += added
        end += 1
    if end >= len(lines):
        return end
    for cut in range(end - 1, start + (end - start) // 2, -1):
        if not lines[cut].strip():
            return cut + 1
    return end


# Line breaks as editors and `grep -n` count them. `str.splitlines` also breaks at form feeds,
# \x85, U+2028 …, which would shift every line number after one.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def chunk_text(text: str, config: ChunkConfig = ChunkConfig()) -> list[Chunk]:
    """Chunks of `text` in order; blank-only stretches produce no chunk."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line of its own
    chunks: list[Chunk] = []
    start = 0
    while start < len(lines):
        end = _window_end(lines, start, config)
        # Trim blank lines at both edges so line ranges point at content.
        first, last = start, end - 1
        while first <= last and not lines[first].strip():
            first += 1
        while last >= first and not lines[last].strip():
            last -= 1
        # A window holding nothing past the previous chunk's end (only overlap) adds nothing.
        if first <= last and (not chunks or last + 1 > chunks[-1].end_line):
            if chunks and chunks[-1].start_line == first + 1:
                chunks.pop()  # blank trimming made both start on one line: keep the longer
            chunks.append(Chunk("\n".join(lines[first : last + 1]), first + 1, last + 1))
        if end >= len(lines):
            break
        # Step back for the overlap, but always move forward.
        start = max(end - config.overlap_lines, start + 1)
    return chunks

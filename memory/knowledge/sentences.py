"""Cutting a chunk into the sentences its second vector pass embeds.

A chunk's own vector averages everything the chunk says, so a short query about one of its sentences
(a synopsis, a question about one detail) can lose to a chunk that is vaguely about the whole topic.
Each sentence of a chunk therefore gets a vector too, and the sentence pass ranks a chunk by its
best-matching sentence (index.py). Chunks stay the unit a search returns; sentences only rank them.

Splitting is deliberately plain and language-neutral. Lines are read as prose reads them (Markdown,
reStructuredText, plain text): a blank line ends a paragraph, and a single line break is a soft
wrap, joined, unless the next line starts a block of its own (a list item, a heading, a table row).
Soft-wrapped CJK lines join without a space (cjk.unwrap). Paragraphs then break after sentence
punctuation (`. ! ?` before a space, `。！？` anywhere). A piece with too little text to mean
anything on its own (a bullet mark, a lone word) is joined to the next one, and a chunk with many
pieces (long lists, tables) has neighbouring pieces joined so the count stays bounded: no text is
ever dropped.
"""

from __future__ import annotations

import re

from arreio.memory.knowledge import cjk

# Less text than this and a piece is joined to its neighbour ("* foo", "Example:"). A CJK character
# counts three times: it carries about as much as three Latin letters (数据库使用预写日志。 is a sentence).
MIN_CHARS = 12
# A chunk never yields more sentence vectors than this (bounds index size and embedding time).
MAX_PIECES = 12

_PARAGRAPH = re.compile(r"\n[ \t]*\n")
# A line that starts a block of its own: a bullet, a numbered item, a heading, a table row.
_BLOCK_START = re.compile(r"(?:[-*+•・]|\d+[.)]|#+|\|)(?:\s|$)|\|")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def _units(text: str) -> list[str]:
    """Paragraphs and block lines, soft wraps joined, each on one line."""
    units: list[str] = []
    for paragraph in _PARAGRAPH.split(cjk.unwrap(text)):
        current = ""
        for line in (raw.strip() for raw in paragraph.split("\n")):
            if not line:
                continue
            if current and _BLOCK_START.match(line):
                units.append(current)
                current = line
            else:
                current = f"{current} {line}" if current else line
        if current:
            units.append(current)
    return units


def split(text: str, *, min_chars: int = MIN_CHARS, max_pieces: int = MAX_PIECES) -> list[str]:
    """The sentences of `text`, in order. Fewer than two means the chunk is one sentence, and its
    own vector already says everything: the result is then empty."""
    raw = [piece.strip() for unit in _units(text) for piece in _SENTENCE_END.split(unit)]
    pieces: list[str] = []
    carry = ""
    for piece in raw:
        if not piece:
            continue
        carry = f"{carry} {piece}" if carry else piece
        if len(carry) + 2 * cjk.count(carry) >= min_chars:
            pieces.append(carry)
            carry = ""
    if carry:
        if pieces:
            pieces[-1] = f"{pieces[-1]} {carry}"
        else:
            pieces.append(carry)
    while len(pieces) > max_pieces:
        # Join neighbours pairwise: halves the count, keeps order and every character.
        pieces = [" ".join(pieces[i : i + 2]) for i in range(0, len(pieces), 2)]
    return pieces if len(pieces) >= 2 else []

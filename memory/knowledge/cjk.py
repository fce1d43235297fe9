"""Text preparation for full-text search, CJK-aware.

FTS5's `unicode61` tokenizer keeps a whole run of Chinese or Japanese characters as one token, so a
query word inside a longer run never matches and recall on CJK text halves. The fix used here is the
classic one: rewrite each CJK run as overlapping character bigrams ("日本語" -> "日本 本語"), the same
way at index time and at query time. Text is NFKC-normalised first so full-width ASCII and
half-width katakana meet their usual forms.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from arreio.memory.knowledge import segmenter
from arreio.memory.knowledge.segmenter import Segmenter

# Han (incl. extensions and compatibility ideographs), kana, Hangul syllables, and the iteration
# and prolonged-sound marks that live inside words. Punctuation (、。「」) is not included: it
# separates runs, as spaces do in English.
_CJK_RANGES = (
    "\u3005\u3006\u3007"  # 々 〆 〇
    "\u3040-\u309f"  # hiragana
    "\u30a0-\u30ff"  # katakana (incl. ー)
    "\u31f0-\u31ff"  # katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0003134f"  # CJK extensions B..G
)
_CJK_RUN = re.compile(f"[{_CJK_RANGES}]+")
# A single line break between two CJK characters is a soft wrap: Chinese and Japanese put no space
# between words, so hard-wrapped text (Markdown, Debian descriptions) breaks words at line ends.
_SOFT_WRAP = re.compile(f"(?<=[{_CJK_RANGES}])[ \t]*\r?\n[ \t]*(?=[{_CJK_RANGES}])")
# What unicode61 treats as a token: letters, digits (and private-use); underscore separates.
_TOKEN = re.compile(r"[^\W_]+")
# A query never needs more terms than this; longer ones only slow the OR-query down.
MAX_QUERY_TERMS = 64


def is_cjk(char: str) -> bool:
    return bool(_CJK_RUN.fullmatch(char))


def count(text: str) -> int:
    """How many CJK characters `text` holds."""
    return sum(len(run) for run in _CJK_RUN.findall(text))


def _bigrams(run: str) -> str:
    if len(run) == 1:
        return run
    return " ".join(run[i : i + 2] for i in range(len(run) - 1))


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def unwrap(text: str) -> str:
    """Join CJK words that a line wrap cut in two (only a single line break between two CJK
    characters; blank lines and breaks next to other scripts stay). Line numbers are kept by the
    chunks themselves; this is for what the indexes and the embedder read."""
    return _SOFT_WRAP.sub("", text)


def rewrite(text: str, segment: Segmenter | None | Literal["auto"] = "auto") -> str:
    """The text as the full-text index sees it: NFKC, soft wraps joined, CJK runs as overlapping
    bigrams; then, for text with kana and when a Japanese segmenter is installed (`auto`: see
    segmenter.py), the same text again as the words it finds. Both views cover the whole text, so
    Latin words count as much as Japanese ones do. Index and query must use the same analyzer."""
    if segment == "auto":
        segment = segmenter.current()[1]
    text = unwrap(normalize(text))
    out = _CJK_RUN.sub(lambda m: f" {_bigrams(m.group(0))} ", text)
    if segment is not None and segmenter.has_kana(text):
        out = f"{out}\n{' '.join(segment(text))}"
    return out


def _strip_diacritics(char: str) -> str:
    decomposed = unicodedata.normalize("NFKD", char)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def fold(token: str) -> str:
    """A token as unicode61 (`remove_diacritics 2`) stores it: case-folded, accents removed from
    letters, but CJK characters left whole. The kana voicing marks are not accents: ハ, バ and パ
    are different sounds (データ is not テータ), and SQLite keeps them, so a query term folded
    without this exception would never match the index."""
    folded = token.casefold()
    if folded.isascii():
        return folded
    return "".join(c if c.isascii() or is_cjk(c) else _strip_diacritics(c) for c in folded)


def tokens(text: str) -> list[str]:
    """Tokens of already-rewritten text, folded as unicode61 folds them (see `fold`)."""
    return [fold(raw) for raw in _TOKEN.findall(text)]


def query_terms(query: str) -> list[str]:
    """Distinct search terms of a free-text query, in order, at most MAX_QUERY_TERMS."""
    seen: dict[str, None] = {}
    for token in tokens(rewrite(query)):
        seen.setdefault(token, None)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return list(seen)


def fts_match(query: str) -> str | None:
    """An FTS5 MATCH expression for a free-text query: every term quoted (so no user text is read
    as FTS syntax), joined by OR and left to BM25 to rank. None when the query has no terms."""
    terms = query_terms(query)
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)

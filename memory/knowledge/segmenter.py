"""Japanese word segmentation for the keyword pass, used when the `arreio[ja]` extra is installed.

Japanese writes no spaces, so the full-text index sees overlapping character bigrams (cjk.py). A
dictionary tokenizer (MeCab through `fugashi`, with the `unidic-lite` dictionary that ships inside
its wheel: nothing is downloaded at run time) finds the words themselves; their surface forms are
indexed *in addition to* the bigrams. Words make a query match the document that has the same word
rather than any text sharing a two-character piece of it; the bigrams stay as the common currency,
so a query with no kana (which is not segmented), a word the dictionary splits differently, or an
index built before the extra was installed still match. Only text containing kana is segmented:
Chinese never does, and a Japanese dictionary would cut Chinese wrongly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from arreio.engine.core.ports import process_env

ENV_VAR = "ARREIO_KB_SEGMENTER"
_KANA = re.compile("[\u3041-\u309f\u30a1-\u30fa\u31f0-\u31ff]")

# text -> word surfaces, in order
Segmenter = Callable[[str], list[str]]


def has_kana(text: str) -> bool:
    return _KANA.search(text) is not None


def _fugashi() -> Segmenter | None:
    from importlib.util import find_spec

    if find_spec("fugashi") is None or find_spec("unidic_lite") is None:
        return None
    import fugashi  # ~10 ms with unidic-lite

    tagger = fugashi.Tagger()  # finds unidic-lite's dictionary inside the installed package

    def segment(text: str) -> list[str]:
        return [word.surface for word in tagger(text)]

    return segment


@cache
def _load(choice: str) -> tuple[str, Segmenter | None]:
    if choice == "none":
        return "cjk-bigrams", None
    segment = _fugashi()
    if segment is None:
        return "cjk-bigrams", None
    return "cjk-bigrams+unidic-lite-words", segment


def current() -> tuple[str, Segmenter | None]:
    """(analyzer name, segmenter or None). `$ARREIO_KB_SEGMENTER` = `auto` (default: MeCab with
    unidic-lite when installed) or `none` (bigrams only). The name is stored with a full-text index
    so an index built by another analyzer is rebuilt rather than searched inconsistently."""
    choice = (process_env().get(ENV_VAR) or "auto").strip().lower()
    return _load("none" if choice == "none" else "auto")

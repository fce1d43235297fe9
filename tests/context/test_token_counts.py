"""Issue 23: `estimate_text` counts words, digit groups and punctuation from byte tables. The counts
must be the integers the regexes give, on any text (ASCII, accents, CJK, emoji, surrogates, controls)."""

from __future__ import annotations

import random
import re

import pytest

from arreio.engine.context.tokens import _latin_counts

_WORD, _DIGITS, _PUNCT = re.compile(r"[A-Za-z]+"), re.compile(r"[0-9]+"), re.compile(r"[!-/:-@\[-`{-~]")
ALPHABET = "aZq09 \t\n\r!@#~`[]{}_-/:é—→✓日本語カ한\u200d😀\udc80ſKİ\x00\x7f\x80\xff"


def _by_regex(text: str, short: int) -> tuple[int, int, int, int]:
    words = _WORD.findall(text)
    return (len(words), sum(max(0, len(w) - short) for w in words),
            sum((len(d) + 2) // 3 for d in _DIGITS.findall(text)), len(_PUNCT.findall(text)))


@pytest.mark.parametrize("short", [0, 3, 6, 7])
def test_byte_table_counts_equal_the_regex_counts(short: int) -> None:
    rng = random.Random(short)
    texts = ["", "a", "1234567", "def handler(event):\n    return event['value'] * 118\n" * 20,
             "x" * 5000 + " " + "9" * 10, "Résumé — what it showed → ok ✓ 日本語 2026-12-02"]
    texts += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 80))) for _ in range(3000)]
    for text in texts:
        assert _latin_counts(text, short) == _by_regex(text, short), repr(text)

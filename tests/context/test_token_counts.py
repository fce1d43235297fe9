"""`estimate_text` counts words, digit groups and punctuation from byte tables. The counts
must be the integers the regexes give, on any text (ASCII, accents, CJK, emoji, surrogates, controls)."""

from __future__ import annotations

import random
import re

import pytest

from arreio.engine.core.tokens import _latin_counts

_WORD, _DIGITS, _PUNCT = re.compile(r"[A-Za-z]+"), re.compile(r"[0-9]+"), re.compile(r"[!-/:-@\[-`{-~]")
ALPHABET = "aZq09 \t\n\r!@#~`[]{}_-/:é—→✓日本語カ한\u200d😀\udc80ſKİ\x00\x7f\x80\xff"


def _by_regex(text: str, short: int) -> tuple[int, int, int, int]:
    words = _WORD.findall(text)
    return (
        len(words),
        sum(max(0, len(w) - short) for w in words),
        sum((len(d) + 2) // 3 for d in _DIGITS.findall(text)),
        len(_PUNCT.findall(text)),
    )


@pytest.mark.parametrize("short", [0, 3, 6, 7])
def test_byte_table_counts_equal_the_regex_counts(short: int) -> None:
    rng = random.Random(short)
    texts = [
        "",
        "a",
        "1234567",
        "def handler(event):\n    return event['value'] * 118\n" * 20,
        "x" * 5000 + " " + "9" * 10,
        "Résumé — what it showed → ok ✓ 日本語 2026-12-02",
    ]
    texts += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 80))) for _ in range(3000)]
    for text in texts:
        assert _latin_counts(text, short) == _by_regex(text, short), repr(text)


def _wide_by_whole_scan(text: str, p) -> float:
    """The non-ASCII part of `estimate_text` as it was: every class counted over the whole text."""
    from arreio.engine.core import tokens as t

    runs = lambda pattern, s: sum(len(m) for m in pattern.findall(s))  # noqa: E731
    total = runs(t._CJK, text) * p.cjk + runs(t._KANA, text) * p.kana + runs(t._HANGUL, text) * p.hangul
    total += runs(t._CJK_PUNCT, text) * p.cjk_punct + len(t._EMOJI.findall(text)) * p.emoji
    rest = t._ASCII_OR_SPACE.sub("", text)
    for pattern in (t._CJK, t._KANA, t._HANGUL, t._CJK_PUNCT, t._EMOJI, t._JOINERS):
        rest = pattern.sub("", rest)
    return total + len(rest) * p.other


@pytest.mark.parametrize("profile", ["o200k", "cl100k", "claude"])
def test_non_ascii_classes_counted_over_the_non_ascii_part_alone(profile: str) -> None:
    """The script classes are counted over the text's non-ASCII characters only (a stub with
    one dash is not scanned seven times whole); the estimate must equal the whole-text scan's."""
    from arreio.engine.core.tokens import _NEWLINES, PROFILES, estimate_text

    p, rng = PROFILES[profile], random.Random(profile)
    alphabet = ALPHABET + "\u3000\u3001「」ｶﾞ\uff01\u00a0\u2028ΣσςКирилл\U00020001🇯🇵\ufe0f"
    # Texts whose non-ASCII characters are all "other" (dashes, arrows, accents) take a short way.
    dashes = ALPHABET + "—–→éü·…\u2010\u2027\u2030\u205e\u2060\u21ff\u10ff\x85\u205f\u2029\u200d\u1100\u2600"
    texts = [
        "[pruned to save context: the 2114-char result.]\nWhat it showed — ok",
        "日本語の文章です。",
        "한국어 текст",
        "showing lines 10–14 of 50",
        "a → b",
        "naïve café…",
        "a\u00a0b",
        "a\u2028b",
        "x\u200dy",
    ]
    texts += ["".join(rng.choice(dashes) for _ in range(rng.randint(1, 80))) for _ in range(2000)]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 120))) for _ in range(3000)]
    for text in texts:
        words, extra, groups, punct = _latin_counts(text, p.short_word)
        ascii_part = (
            words * p.word
            + extra * p.per_extra_char
            + groups * p.digits
            + punct * p.punct
            + len(_NEWLINES.findall(text)) * p.newline
        )
        whole = ascii_part + (0.0 if text.isascii() else _wide_by_whole_scan(text, p))
        assert estimate_text(text, p) == pytest.approx(whole, abs=1e-9), repr(text)

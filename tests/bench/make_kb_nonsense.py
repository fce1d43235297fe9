"""The nonsense queries of kb_offtopic_queries.json's "nonsense_by_kind", made from a fixed seed.

    python tests/bench/make_kb_nonsense.py   # rewrites that part of the file, the same every time

Nonsense as people type it, by kind: keyboard mashes on Latin (QWERTY), Cyrillic (ЙЦУКЕН) and kana
(JIS) layouts, random Han characters, random letters, lorem ipsum, digits and symbols, one random
token, mixed scripts, very short and very long mashes. 24 of each: calibrate_kb_scores.py takes
every other one for 'dev' and keeps the rest aside ('held_out').
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

FILE = Path(__file__).with_name("kb_offtopic_queries.json")
PER_KIND = 24

QWERTY = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
JCUKEN = ["йцукенгшщзхъ", "фывапролджэ", "ячсмитьбю"]
JIS_KANA = ["たていすかんなにらせ", "ちとしはきくまのりれけむ", "つさそひこみもねるめろ"]
LOREM = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et "
    "dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea "
    "commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur"
).split()
SYMBOLS = "!@#$%^&*()_+-=[]{};:'\",.<>/?|~`"


def walk(rows: list[str], length: int, rng: random.Random) -> str:
    """A hand sliding over a keyboard: mostly the next key along a row, sometimes a jump."""
    row = rng.randrange(len(rows))
    col = rng.randrange(len(rows[row]))
    out = []
    for _ in range(length):
        out.append(rows[row][col])
        step = rng.random()
        if step < 0.6:
            col = min(len(rows[row]) - 1, max(0, col + rng.choice((-1, 1))))
        elif step < 0.8:
            row = min(len(rows) - 1, max(0, row + rng.choice((-1, 1))))
            col = min(len(rows[row]) - 1, col)
        else:
            row, col = rng.randrange(len(rows)), 0
            col = rng.randrange(len(rows[row]))
    return "".join(out)


def mash(rows: list[str], rng: random.Random, words: tuple[int, int] = (1, 3), size: tuple[int, int] = (3, 8)) -> str:
    return " ".join(walk(rows, rng.randint(*size), rng) for _ in range(rng.randint(*words)))


def han(rng: random.Random, n: int) -> str:
    return "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(n))


def kinds(rng: random.Random) -> dict[str, list[str]]:
    letters = string.ascii_lowercase
    made: dict[str, list[str]] = {
        "mash_latin": [mash(QWERTY, rng) for _ in range(PER_KIND)],
        "mash_cyrillic": [mash(JCUKEN, rng) for _ in range(PER_KIND)],
        "mash_kana": [
            mash(JIS_KANA, rng, size=(2, 6)) if i % 2 else _katakana(mash(JIS_KANA, rng, size=(2, 6)))
            for i in range(PER_KIND)
        ],
        "mash_han": [" ".join(han(rng, rng.randint(2, 4)) for _ in range(rng.randint(1, 3))) for _ in range(PER_KIND)],
        "random_letters": [
            " ".join("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(rng.randint(1, 4)))
            for _ in range(PER_KIND)
        ],
        "lorem_ipsum": [" ".join(rng.sample(LOREM, rng.randint(2, 7))) for _ in range(PER_KIND)],
        "digits_symbols": [_digits(rng) for _ in range(PER_KIND)],
        "single_token": [
            walk(QWERTY, rng.randint(4, 10), rng) if i % 2 else _letters(rng, letters, rng.randint(4, 10))
            for i in range(PER_KIND)
        ],
        "mixed_scripts": [_mixed(rng) for _ in range(PER_KIND)],
        "very_short": [_short(rng, i) for i in range(PER_KIND)],
        "very_long": [mash(QWERTY, rng, words=(12, 30), size=(2, 10)) for _ in range(PER_KIND)],
    }
    return made


def _letters(rng: random.Random, letters: str, n: int) -> str:
    return "".join(rng.choice(letters) for _ in range(n))


def _katakana(text: str) -> str:
    return "".join(chr(ord(c) + 0x60) if "\u3041" <= c <= "\u3096" else c for c in text)


def _digits(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.4:
            parts.append("".join(rng.choice(string.digits) for _ in range(rng.randint(2, 8))))
        elif kind < 0.7:
            parts.append("".join(rng.choice(SYMBOLS) for _ in range(rng.randint(2, 6))))
        else:
            parts.append("".join(rng.choice(string.digits + SYMBOLS) for _ in range(rng.randint(3, 8))))
    return " ".join(parts)


def _mixed(rng: random.Random) -> str:
    pieces = [
        lambda: mash(QWERTY, rng, words=(1, 1)),
        lambda: mash(JCUKEN, rng, words=(1, 1)),
        lambda: mash(JIS_KANA, rng, words=(1, 1), size=(2, 4)),
        lambda: han(rng, rng.randint(1, 3)),
        lambda: "".join(rng.choice(string.digits) for _ in range(rng.randint(1, 4))),
    ]
    chosen = rng.sample(pieces, rng.randint(2, 4))
    return " ".join(piece() for piece in chosen)


def _short(rng: random.Random, i: int) -> str:
    """One to three characters of one script."""
    n = rng.randint(1, 3)
    pool = [string.ascii_lowercase, "йцукенгшщзхфывапролджэячсмитьбю", "".join(JIS_KANA), None][i % 4]
    if pool is None:
        return han(rng, n)
    return "".join(rng.choice(pool) for _ in range(n))


def main() -> int:
    data = json.loads(FILE.read_text(encoding="utf-8"))
    data["nonsense_by_kind"] = kinds(random.Random(20261205))
    FILE.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

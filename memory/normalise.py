"""The text the security scan reads: one canonical form for the many ways to spell the same words.

An injection only has to be readable by the model; a scan that reads the raw characters can be
walked around with look-alikes. So before any rule runs, `fold` turns a text into its *skeleton*:

1. every default-ignorable code point is removed (the Unicode `Default_Ignorable_Code_Point`
   property, read through the `regex` module: zero-width characters, joiners, bidi controls,
   variation selectors, tag characters, Hangul fillers, ... — the property, not a hand-picked list);
2. NFKC (full-width, mathematical, circled and other compatibility forms become plain letters);
3. confusables become the Latin letter they imitate (Cyrillic `і`, Greek `ο`, small capitals,
   accented letters; the table is generated from the Unicode character names at import);
4. combining marks are dropped, curly quotes straightened, Markdown emphasis (`*`, backticks)
   removed, case folded, contractions spelled out ("you're" → "you are", "don't" → "do not")
   and whitespace collapsed.

`variants` gives the extra readings worth a second pass when (and only when) the text carries a
sign of evasion: invisible characters used as word gaps, letters spaced out, digits for letters.
`hidden_characters` is the separate check on the *raw* text for invisible characters that carry or
disguise content by themselves (they are refused even when what they hide looks harmless).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import regex

__all__ = ["fold", "clear_cache", "prepare", "variants", "hidden_characters", "Hidden", "as_folded"]

_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}+")
_BIDI_FORMATTING = regex.compile(r"[\u202a-\u202e\u2066-\u2069]")  # embeddings, overrides, isolates
_TAGS = re.compile("[\U000e0000-\U000e007f]+")
_VARIATION = "\ufe00-\ufe0f\U000e0100-\U000e01ef\u180b-\u180d\u180f"
_VS_RUN = re.compile(f"[{_VARIATION}]{{2,}}|(?<=[A-Za-z])[{_VARIATION}]")
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "*": None,
        "`": None,
    }
)

# Script letters that look like a Latin letter, by (script, case) and the letter's Unicode name.
# Only the *name table* is written by hand; which code points carry those names (with tonos,
# diaeresis, ...) is read from unicodedata below.
_LOOKALIKES: dict[tuple[str, str], dict[str, str]] = {
    ("GREEK", "CAPITAL"): {
        "ALPHA": "a",
        "BETA": "b",
        "EPSILON": "e",
        "ZETA": "z",
        "ETA": "h",
        "IOTA": "i",
        "KAPPA": "k",
        "MU": "m",
        "NU": "n",
        "OMICRON": "o",
        "RHO": "p",
        "TAU": "t",
        "UPSILON": "y",
        "CHI": "x",
        "LUNATE SIGMA SYMBOL": "c",
    },
    ("GREEK", "SMALL"): {
        "ALPHA": "a",
        "IOTA": "i",
        "KAPPA": "k",
        "NU": "v",
        "OMICRON": "o",
        "RHO": "p",
        "UPSILON": "u",
        "CHI": "x",
        "GAMMA": "y",
        "ETA": "n",
        "TAU": "t",
        "EPSILON": "e",
        "FINAL SIGMA": "c",
        "LUNATE SIGMA SYMBOL": "c",
    },
    ("CYRILLIC", "CAPITAL"): {
        "A": "a",
        "VE": "b",
        "IE": "e",
        "IO": "e",
        "KA": "k",
        "EM": "m",
        "EN": "h",
        "O": "o",
        "ER": "p",
        "ES": "c",
        "TE": "t",
        "HA": "x",
        "U": "y",
        "STRAIGHT U": "y",
        "DZE": "s",
        "BYELORUSSIAN-UKRAINIAN I": "i",
        "YI": "i",
        "JE": "j",
        "QA": "q",
        "WE": "w",
        "SHHA": "h",
        "KOMI DE": "d",
        "PALOCHKA": "i",
    },
    ("CYRILLIC", "SMALL"): {
        "A": "a",
        "IE": "e",
        "IO": "e",
        "O": "o",
        "ER": "p",
        "ES": "c",
        "U": "y",
        "HA": "x",
        "DZE": "s",
        "BYELORUSSIAN-UKRAINIAN I": "i",
        "YI": "i",
        "JE": "j",
        "QA": "q",
        "WE": "w",
        "SHHA": "h",
        "KOMI DE": "d",
        "STRAIGHT U": "y",
        "PALOCHKA": "i",
        "GHE": "r",
        "PE": "n",
        "KA": "k",
        "EM": "m",
        "EN": "h",
        "TE": "t",
        "VE": "b",
        "SOFT SIGN": "b",
    },
    ("LATIN", "SMALL"): {
        "ALPHA": "a",
        "IOTA": "i",
        "UPSILON": "u",
        "GAMMA": "y",
        "OPEN O": "o",
        "DOTLESS J WITH STROKE": "j",
    },
    ("ARMENIAN", "SMALL"): {"OH": "o", "SEH": "u", "HO": "h", "VO": "n", "CO": "g", "VEW": "w", "ZA": "q"},
    ("CHEROKEE", "LETTER"): {
        "A": "d",
        "E": "r",
        "I": "t",
        "O": "g",
        "S": "w",
        "DO": "v",
        "GO": "a",
        "HA": "o",
        "MA": "h",
        "NAH": "g",
        "QUO": "i",
        "TLI": "p",
        "TSO": "k",
    },
}
_LATIN_NAME = re.compile(
    r"^(?:(?:NEGATIVE )?(?:CIRCLED|SQUARED|PARENTHESIZED) )?LATIN (?:SMALL |CAPITAL )?LETTER "
    r"(?:SMALL CAPITAL |DOTLESS |SCRIPT |LONG |OPEN |CLOSED |REVERSED OPEN )?([A-Z])(?: WITH .+)?$"
)
_SCRIPT_NAME = re.compile(
    r"^(GREEK|CYRILLIC|ARMENIAN|LATIN) (SMALL|CAPITAL) LETTER (.+?)(?: WITH .+)?$|^(CHEROKEE) (LETTER) (.+)$"
)
_REGIONAL = re.compile(r"^REGIONAL INDICATOR SYMBOL LETTER ([A-Z])$")
_RANGES = (
    (0x00C0, 0x058F),
    (0x13A0, 0x13F5),
    (0x1D00, 0x1DBF),
    (0x1E00, 0x1FFF),
    (0x2C60, 0x2C7F),
    (0xA720, 0xA7FF),
    (0xAB30, 0xAB6F),
    (0x1F100, 0x1F1FF),
)


def _confusable_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for low, high in _RANGES:
        for code in range(low, high + 1):
            name = unicodedata.name(chr(code), "")
            latin = _LATIN_NAME.match(name) or _REGIONAL.match(name)
            if latin:
                table[code] = latin.group(1).lower()
                continue
            script = _SCRIPT_NAME.match(name)
            if script:
                key, letter = ((script[1], script[2]), script[3]) if script[1] else ((script[4], script[5]), script[6])
                target = _LOOKALIKES.get(key, {}).get(letter)
                if target:
                    table[code] = target
    return table


_CONFUSABLES = _confusable_table()
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


# Contractions read in full, so one rule covers "you're"/"you are" and "don't"/"do not".
_CONTRACTIONS = re.compile(
    r"\b(you|they|we)'re\b|\b(you|they|we|i)'ve\b|\b(you|they|we|i)'ll\b|\bi'm\b"
    r"|\b(do|does|did|is|are|was|were|has|have|had|should|must|would|could)n't\b|\bcan't\b|\bwon't\b"
)


def _expand(match: re.Match[str]) -> str:
    word = match.group(0)
    if word.endswith("n't"):
        return {"can't": "cannot", "won't": "will not"}.get(word, word[:-3] + " not")
    head, _, tail = word.partition("'")
    return f"{head} {dict(re='are', ve='have', ll='will', m='am')[tail]}"


def prepare(text: str) -> str:
    """Invisible characters out, NFKC in: the form the decoders read (case and letters intact)."""
    text = _IGNORABLE.sub("", text)
    if _NON_ASCII.search(text):
        text = _IGNORABLE.sub("", unicodedata.normalize("NFKC", text))
    return text


def as_folded(words: str) -> str:
    """Words of a rule written in a script with look-alikes (Cyrillic, Greek), as `fold` leaves them
    in a text: "игнорируй" is read as the mixed "иrhopиpyй", and a rule must spell it that way."""
    text = unicodedata.normalize("NFKC", words.casefold()).translate(_CONFUSABLES)
    text = _COMBINING.sub("", unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFC", text).translate(_CONFUSABLES)


_CACHED_CHARS = 4096  # entry-sized texts: a write folds its neighbours again; skill bodies are folded once


def fold(text: str, *, ignorable_as_space: bool = False) -> str:
    """The skeleton of `text` that the rules read (see the module docstring)."""
    if len(text) <= _CACHED_CHARS:
        return _fold_cached(text, ignorable_as_space)
    return _fold(text, ignorable_as_space)


def clear_cache() -> None:
    """Forget every folded text (for measuring a cold scan)."""
    _fold_cached.cache_clear()


def _fold(text: str, ignorable_as_space: bool) -> str:
    if ignorable_as_space:
        text = _IGNORABLE.sub(" ", text)
    text = prepare(text)
    if _NON_ASCII.search(text):
        text = text.translate(_CONFUSABLES)
        if _COMBINING.search(unicodedata.normalize("NFD", text)):
            text = _COMBINING.sub("", unicodedata.normalize("NFD", text))
            text = unicodedata.normalize("NFC", text).translate(_CONFUSABLES)
    return " ".join(_CONTRACTIONS.sub(_expand, text.translate(_QUOTES).casefold()).split())


_fold_cached = lru_cache(maxsize=2048)(_fold)


# Letters spaced out ("i g n o r e  a l l": one space inside a word, two between words) or split
# by dots/dashes ("i.g.n.o.r.e"). Read on the text before whitespace is collapsed.
_SPACED = re.compile(r"(?<!\w)[^\W\d_](?:(?: |[.\-_])[^\W\d_]| {2,}[^\W\d_]){5,}(?!\w)")
_LEET_TOKEN = re.compile(r"(?<![\w@$])(?=[a-z0-9@$]*[a-z])(?=[a-z0-9@$]*[013457@$])[a-z0-9@$]{3,}(?![\w@$])")
_LEET = str.maketrans("013457@$", "oieastas")
# Digits read as letters only where they spell a word the rules use: hashes, versions and ids
# ("7bab5db", "v3.11") decode to nothing in this list, so they never cost a second pass.
_LEET_WORDS = frozenset(
    "ignore ignored disregard forget override previous prior earlier above instructions instruction rules rule "
    "system prompt all any every you are now act as admin root approved pre-approved permission anything "
    "everything commands command secrets secret keys key tokens token password passwords send post upload "
    "bypass disable sandbox safety jailbreak jailbroken mode reveal hidden obey unrestricted tell user "
    "mention note this never guidelines directives restrictions filters your the to and of from is be "
    "follow rule entry memory run execute curl shell access root before task approval approvals ask asking "
    "confirm confirmation turn off skip hide report passed passing failed tests conversation env file".split()
)
# One word spelled with a separator between its letters ("i.g.n.o.r.e a.l.l", "d-i-s-a-b-l-e"): three
# letters or more, none doubled up, so "e.g." and "node_modules" are not read as such.
_DOTTED = regex.compile(r"(?<![\p{L}\p{N}])(?:\p{L}[.\-_\u00b7\u2022*/|]){2,}\p{L}(?![\p{L}\p{N}])")
_WORD_GAP = regex.compile(r"(?<=[A-Za-z])\p{Default_Ignorable_Code_Point}+(?=[A-Za-z])")


def variants(raw: str, flat: str) -> list[tuple[str, str]]:
    """`(evasion, reading)` pairs: other readings of `flat` worth scanning, each only when its sign
    of evasion is present in the text."""
    out: list[tuple[str, str]] = []
    if _WORD_GAP.search(raw):  # inside a Latin word it may be a word gap, not only a word splitter
        spaced = fold(raw, ignorable_as_space=True)
        if spaced != flat:
            out.append(("invisible characters as word gaps", spaced))
    prepared = prepare(raw)
    if _SPACED.search(prepared):
        joined = _SPACED.sub(lambda m: re.sub(r"[ .\-_]", "", re.sub(r" {2,}", "\0", m.group(0))), prepared)
        out.append(("spaced-out letters", fold(joined.replace("\0", " "))))
    dotted = _DOTTED.findall(prepared)
    if len(dotted) >= 2:
        out.append(("letters split by dots", fold(_DOTTED.sub(lambda m: re.sub(r"[^\w]|_", "", m.group(0)), prepared))))
    words = [m for m in _LEET_TOKEN.finditer(flat) if m.group(0).translate(_LEET) in _LEET_WORDS]
    if len(words) >= 2:
        # two words the rules know are the sign; then every mixed token is read, so the words
        # between them ("b3f0r3", "7a5k") read too
        out.append(("digits for letters", _LEET_TOKEN.sub(lambda m: m.group(0).translate(_LEET), flat)))
    return out


@dataclass(frozen=True)
class Hidden:
    """An invisible character that carries or disguises content by itself: its code point and why."""

    char: str
    reason: str

    def label(self) -> str:
        code = ord(self.char)
        name = unicodedata.name(self.char, "TAG CHARACTER" if 0xE0000 <= code <= 0xE007F else "")
        return f"U+{code:04X} {name}".strip() + f" ({self.reason})"


_FLAG_TAGS = re.compile("\U0001f3f4[\U000e0061-\U000e007a]{2,6}\U000e007f")  # subdivision flags (England, ...)


def hidden_characters(text: str) -> Hidden | None:
    """The first invisible character that no honest note needs where it stands, or None.

    Refused: tag characters (ASCII smuggling) outside an emoji subdivision flag; bidi embeddings,
    overrides and isolates (they reorder what a human reviewer sees); a run of variation selectors
    or one after a Latin letter (bytes smuggled as selectors); three or more invisible characters
    in a row. Allowed, because real text uses them: a single variation selector after an emoji or
    a CJK ideograph, the joiners inside emoji sequences, ZWNJ in Persian or Indic words, LRM/RLM,
    a soft hyphen, a leading byte-order mark. Whatever an allowed character hides is still read:
    the rules run on the text with it removed."""
    if _TAGS.search(text):
        text = _FLAG_TAGS.sub("\U0001f3f4", text)
        found = _TAGS.search(text)
        if found:
            return Hidden(found.group(0)[0], "tag characters spell hidden text")
    found = _BIDI_FORMATTING.search(text)
    if found:
        return Hidden(found.group(0), "bidi control reorders what a reader sees")
    found = _VS_RUN.search(text)
    if found:
        return Hidden(found.group(0)[0], "variation selectors with nothing to vary carry hidden bytes")
    for run in _IGNORABLE.finditer(text):
        if len(run.group(0)) >= 3:
            return Hidden(run.group(0)[0], "a run of invisible characters")
    found = _LONE.search(text)
    if found:
        return Hidden(found.group(0), "an invisible character inside the text")
    return None


# Invisible characters that no honest note needs in the middle of its text: the zero-width space
# (except between letters of a script written without spaces, where it marks a word break), the word
# joiner and the invisible operators, a byte-order mark past the start, the Mongolian vowel separator
# outside Mongolian, and the Hangul fillers outside Hangul. Each one alone hides nothing, but no editor
# puts one there, and the seeds we hold refuse them; the scan still reads the text with them removed.
_NO_SPACES = r"\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Tibetan}\p{Han}\p{Hiragana}\p{Katakana}\p{Javanese}\p{Balinese}"
_LONE = regex.compile(
    rf"(?<![{_NO_SPACES}])\u200b|\u200b(?![{_NO_SPACES}])|[\u2060-\u2064]|(?<=.)\ufeff|(?<!\p{{Mongolian}})\u180e"
    r"|(?<!\p{Hangul})[\u115f\u1160\u3164\uffa0](?!\p{Hangul})",
    regex.DOTALL,
)

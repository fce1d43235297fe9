"""Encoded text inside a memory entry or skill, decoded so the scan can read it too.

A model reads base64 and hex about as easily as prose, so `aWdub3Jl…` is an instruction the scan
must see. `payloads` finds runs that *could* be an encoding (base64, base32 or hex of at least 16
characters, `%xx` escapes, a text that names ROT13, or one that reads as English only in ROT13 or
backwards) and keeps a decoding only when it is mostly
printable text: hashes, UUIDs, commit ids and random tokens decode to bytes that are not, so they
are never scanned twice and never refused for what they look like.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from urllib.parse import unquote

__all__ = ["payloads", "invisible_payloads", "hidden_readings", "MIN_RUN"]

MIN_RUN = 16
# `%` and not an f-string: the patterns are full of regex braces
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{%d,}={0,2}" % MIN_RUN)  # noqa: UP031
_HEX = re.compile(r"(?:\\x|0x)?(?:[0-9a-fA-F]{2}(?:\\x|[ :]|0x)?){%d,}" % (MIN_RUN // 2))  # noqa: UP031
_BASE32 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Z2-7]{%d,}={0,6}(?![A-Za-z0-9+/])" % MIN_RUN)  # noqa: UP031
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ROT13_NAMED = re.compile(r"\brot[\s_-]?13\b", re.IGNORECASE)
_MAX_RUNS = 32  # a store holds a handful of runs; a pathological text must not cost more


def _printable(data: bytes) -> str | None:
    """The bytes as text when they read as text: valid UTF-8, at least 8 characters, nearly all
    printable, with some letters. Random bytes almost never pass; an encoded sentence always does."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 8:
        return None
    printable = sum(ch.isprintable() or ch in "\n\t\r" for ch in text)
    words = sum(ch.isalnum() for ch in text)  # letters, or the digits of a nested hex layer
    if printable < 0.95 * len(text) or words < 0.6 * len(text.replace(" ", "")):
        return None
    return text


def _from_base64(run: str) -> str | None:
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        if "-" in body or "_" in body:
            data = base64.urlsafe_b64decode(padded)
        else:
            data = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _printable(data)


def _from_hex(run: str) -> str | None:
    digits = re.sub(r"\\x|0x|[ :]", "", run)
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return _printable(bytes.fromhex(digits))
    except ValueError:
        return None


def _from_base32(run: str) -> str | None:
    body = run.rstrip("=")
    if len(body) % 8 in (1, 3, 6):
        return None
    try:
        return _printable(base64.b32decode(body + "=" * (-len(body) % 8)))
    except (binascii.Error, ValueError):
        return None


# The words most frequent in English prose: a text that has few of them but whose ROT13 or mirror
# image has many was written in ROT13 or backwards (an honest note in any language has no such
# reading; its ROT13 and its mirror image are noise).
_COMMON = frozenset(
    "the and to of a in is it you your all for on with as be this that are not or before every each any "
    "from at by do if then when after into send run ignore disable never always ask user secrets secret "
    "instructions previous approval sandbox file files key keys token tokens conversation".split()
)
_WORD = re.compile(r"[a-z]+")


def _common_words(text: str) -> int:
    return sum(word in _COMMON for word in _WORD.findall(text.lower()))


def hidden_readings(text: str) -> list[tuple[str, str]]:
    """The text read in ROT13 and read backwards, each only when that reading is English prose and
    the text as written is not (at least three common words more)."""
    found: list[tuple[str, str]] = []
    plain = _common_words(text)
    for name, reading in (("rot13", codecs.encode(text, "rot13")), ("reversed text", text[::-1])):
        if _common_words(reading) >= max(3, 2 * plain + 2):
            found.append((name, reading))
    return found


def payloads(text: str) -> list[tuple[str, str]]:
    """`(encoding, decoded text)` for every run in `text` that decodes to readable text."""
    found: list[tuple[str, str]] = []
    for run in _HEX.findall(text)[:_MAX_RUNS]:
        decoded = _from_hex(run)
        if decoded:
            found.append(("hex", decoded))
    for run in _BASE64.findall(text)[:_MAX_RUNS]:
        if re.fullmatch(r"[0-9a-fA-F]+", run):  # hex digits are valid base64 too: decoded above
            continue
        decoded = _from_base64(run)
        if decoded:
            found.append(("base64", decoded))
    for run in _BASE32.findall(text)[:_MAX_RUNS]:
        decoded = _from_base32(run)
        if decoded:
            found.append(("base32", decoded))
    if len(_PERCENT.findall(text)) >= 3:
        decoded = unquote(text)
        if decoded != text:
            found.append(("url-encoding", decoded))
    if _ROT13_NAMED.search(text):
        found.append(("rot13", codecs.encode(text, "rot13")))
    else:
        found += hidden_readings(text)
    return found


_TAG_RUN = re.compile("[\U000e0020-\U000e007e]{4,}")
_SELECTOR_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{4,}")


def invisible_payloads(raw: str) -> list[tuple[str, str]]:
    """Text smuggled in invisible characters: tag characters spell ASCII (U+E0041 is `A`), and
    variation selectors carry one byte each (U+FE00–FE0F are 0–15, U+E0100–E01EF are 16–255)."""
    found: list[tuple[str, str]] = []
    for run in _TAG_RUN.findall(raw):
        found.append(("tag characters", "".join(chr(ord(ch) - 0xE0000) for ch in run)))
    for run in _SELECTOR_RUN.findall(raw):
        data = bytes(ord(ch) - 0xFE00 if ord(ch) < 0xE0000 else ord(ch) - 0xE0100 + 16 for ch in run)
        decoded = _printable(data)
        if decoded:
            found.append(("variation selectors", decoded))
    return found

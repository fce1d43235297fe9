"""Token estimation that does not need the network (docs/architecture.md section 3: the watermark).

A character count divided by four badly underestimates Chinese or Japanese (one ideograph is often a
whole token, or more) and overestimates indented code. `estimate_text` therefore weighs the scripts
separately — Latin words, digits, punctuation, whitespace runs, CJK ideographs, kana, hangul, emoji,
other scripts — with one weight set per tokenizer family (`PROFILES`, fitted on `fixtures/tokens/`).

`Calibrator` then corrects the estimate per model from what the provider reports (`after_model`
usage): a running correction factor, so the watermark tracks the real tokenizer of the real model.
`bundled_tiktoken` loads OpenAI's BPE files that litellm ships, when they are installed, for an exact
count; it reads local files only and never downloads anything.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.regular_file import Limit, read_bytes

if TYPE_CHECKING:
    from arreio.engine.core.messages import Message
    from arreio.engine.core.model_io import ModelRequest, SystemBlock, ToolSpec, Usage


@dataclass(frozen=True)
class Profile:
    """Weights of one tokenizer family. Latin words cost `word` tokens plus `per_extra_char` for
    every letter past `short_word`; the other fields are tokens per unit."""

    word: float = 1.0
    short_word: int = 6
    per_extra_char: float = 0.25
    digits: float = 1.0  # per group of three digits (the big BPEs split numbers that way)
    punct: float = 0.55  # ASCII punctuation and symbols often merge with a neighbour
    newline: float = 0.8  # a run of newlines plus indentation
    cjk: float = 1.0  # per ideograph
    kana: float = 1.0
    hangul: float = 1.0
    cjk_punct: float = 1.0  # 、。「」 and full-width forms
    emoji: float = 2.0
    other: float = 0.6  # per character of any other script (Cyrillic, accented Latin, ...)


# Fitted on fixtures/tokens/ (counts.json); see tests/context/test_tokens.py.
PROFILES: dict[str, Profile] = {
    "o200k": Profile(
        per_extra_char=0.25, punct=0.65, newline=0.65, cjk=0.9, kana=0.8, hangul=0.7, cjk_punct=0.6, emoji=1.6
    ),
    "cl100k": Profile(
        per_extra_char=0.25, punct=0.65, newline=0.65, cjk=1.31, kana=0.95, hangul=1.1, cjk_punct=1.0, emoji=2.3
    ),
    # Claude's tokenizer is not public for current models; its published legacy one sits between the
    # two OpenAI ones on CJK. The calibrator closes the remaining gap from reported usage.
    "claude": Profile(
        per_extra_char=0.27, punct=0.7, newline=0.7, cjk=1.21, kana=1.07, hangul=1.0, cjk_punct=0.9, emoji=2.3
    ),
}
DEFAULT_PROFILE = "claude"

_WORD = re.compile(r"[A-Za-z]+")
_DIGITS = re.compile(r"[0-9]+")
_PUNCT = re.compile(r"[!-/:-@\[-`{-~]")
_NEWLINES = re.compile(r"\n[ \t\n]*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]+")
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]+")
_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]+")
_CJK_PUNCT = re.compile(r"[\u3000-\u303f\uff00-\uff65\uffe0-\uffef]+")
_EMOJI = re.compile(r"[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff]")
_ASCII_OR_SPACE = re.compile(r"[\x00-\x7f\s]+")
_JOINERS = re.compile(r"[\u200d\ufe0f\ufe0e]")
_ASCII_BYTES = bytes(range(0x80))
# A character one of the classes above counts, or a space `_ASCII_OR_SPACE` drops: outside these
# ranges (Latin-1, Greek, Cyrillic, … up to U+10FF; the dashes, quotes and arrows of U+2010-U+21FF)
# every character is "other", but for the spaces among them (U+0085, U+00A0, U+2028-9, U+205F).
_CLASSED = re.compile(r"[^\x00-\x84\x86-\x9f\xa1-\u10ff\u2010-\u2027\u2030-\u205e\u2060-\u21ff]")


def profile_for(model: str) -> str:
    """The tokenizer family of a model string (`openai/gpt-4o`, `claude-…`, `litellm/…`)."""
    name = model.split("/", 1)[-1].lower()
    if name.startswith(("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")):
        return "o200k"
    if name.startswith(("gpt-4", "gpt-3.5")):
        return "cl100k"
    return DEFAULT_PROFILE


# Byte tables for counting words, digit groups and punctuation without building a string per match
# (a 2 KB result took ~300 µs in `findall`s). UTF-8 bytes of non-ASCII characters are all
# >= 0x80, so they separate words exactly as they do for the `[A-Za-z]+` / `[0-9]+` patterns.
_LETTERS_ONLY = bytes(0x61 if chr(b).isascii() and chr(b).isalpha() else 0x20 for b in range(256))
_DIGITS_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_NOT_PUNCT = bytes(b for b in range(256) if not _PUNCT.fullmatch(chr(b)) or b >= 0x80)


def _latin_counts(text: str, short: int) -> tuple[int, int, int, int]:
    """(words, letters past `short` summed over words, digit groups of three, punctuation marks) —
    the same integers as `_WORD` (and its words' lengths), `_DIGITS` and `_PUNCT` give."""
    return _byte_counts(text.encode("utf-8", "surrogatepass"), short)


def _byte_counts(raw: bytes, short: int) -> tuple[int, int, int, int]:
    """`_latin_counts` of the text's UTF-8 bytes."""
    words = Counter(map(len, raw.translate(_LETTERS_ONLY).split()))
    digits = Counter(map(len, raw.translate(_DIGITS_ONLY).split()))
    extra = sum((n - short) * count for n, count in words.items() if n > short)
    groups = sum((n + 2) // 3 * count for n, count in digits.items())
    return sum(words.values()), extra, groups, len(raw.translate(None, _NOT_PUNCT))


def _runs(pattern: re.Pattern[str], text: str) -> int:
    return sum(len(m) for m in pattern.findall(text))


def estimate_text(text: str, profile: str | Profile = DEFAULT_PROFILE) -> float:
    """Estimated tokens of `text` (unrounded, uncalibrated). Linear in the text's length."""
    if not text:
        return 0.0
    p = PROFILES.get(profile, PROFILES[DEFAULT_PROFILE]) if isinstance(profile, str) else profile
    # Letters past `short_word` in each word, summed (counted from byte tables: `_latin_counts`).
    raw = text.encode("utf-8", "surrogatepass")
    words, extra, groups, punct = _byte_counts(raw, p.short_word)
    total = words * p.word + extra * p.per_extra_char
    total += groups * p.digits
    total += punct * p.punct
    total += len(_NEWLINES.findall(text)) * p.newline
    if not text.isascii():
        # Every class below holds only non-ASCII characters and is counted per character, so counting
        # over the non-ASCII characters alone gives the same numbers: a mostly-English text (a pruned
        # result's stub, with its one dash) is not scanned seven more times whole.
        # UTF-8 writes a non-ASCII character with bytes >= 0x80 only: without the ASCII bytes, what
        # is left decodes to exactly the non-ASCII characters, in order (a regex scan took ~9 µs
        # over a 550-character stub; this is a copy at memory speed).
        wide = raw.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")
        if _CLASSED.search(wide) is None:  # dashes, arrows, accents: "other" all (one search, not 14)
            return total + len(wide) * p.other
        total += _runs(_CJK, wide) * p.cjk + _runs(_KANA, wide) * p.kana + _runs(_HANGUL, wide) * p.hangul
        total += _runs(_CJK_PUNCT, wide) * p.cjk_punct
        emoji = len(_EMOJI.findall(wide))
        total += emoji * p.emoji
        rest = _ASCII_OR_SPACE.sub("", wide)
        for pattern in (_CJK, _KANA, _HANGUL, _CJK_PUNCT, _EMOJI, _JOINERS):
            rest = pattern.sub("", rest)
        total += len(rest) * p.other
    return total


def estimate_tokens(text: str, model: str = "") -> int:
    """Rounded, uncalibrated estimate for `model`'s tokenizer family (the default family without one)."""
    return max(1, round(estimate_text(text, profile_for(model) if model else DEFAULT_PROFILE))) if text else 0


# -- whole requests -----------------------------------------------------------------------------
MESSAGE_OVERHEAD = 4  # role markers and separators per message
IMAGE_TOKENS = 1600  # a typical screenshot; providers bill images by pixels, not bytes


def estimate_message(message: Message, profile: str = DEFAULT_PROFILE) -> float:
    total = float(MESSAGE_OVERHEAD)
    for part in message.parts:
        kind = part.type
        if kind == "text":
            total += estimate_text(part.text, profile)
        elif kind == "thinking":
            total += estimate_text(part.thinking, profile)
        elif kind == "tool_call":
            total += 6 + estimate_text(part.name + json.dumps(part.arguments, ensure_ascii=False), profile)
        elif kind == "tool_result":
            total += 6 + estimate_text(part.content, profile) + IMAGE_TOKENS * len(part.images)
        elif kind == "image":
            total += IMAGE_TOKENS
    return total


def estimate_messages(messages: list[Message], profile: str = DEFAULT_PROFILE) -> float:
    return sum(estimate_message(m, profile) for m in messages)


def estimate_prefix(system: list[SystemBlock], tools: list[ToolSpec], profile: str = DEFAULT_PROFILE) -> float:
    """The part of every request that is not history: system blocks and tool schemas."""
    total = sum(estimate_text(b.text, profile) + MESSAGE_OVERHEAD for b in system)
    for spec in tools:
        total += 8 + estimate_text(spec.name + spec.description + json.dumps(spec.input_schema), profile)
    return total


def estimate_request(request: ModelRequest, profile: str | None = None) -> float:
    profile = profile or profile_for(request.model)
    return estimate_prefix(request.system, request.tools, profile) + estimate_messages(request.messages, profile)


# -- calibration --------------------------------------------------------------------------------
def _estimated_usage(model: str) -> bool:
    return model == "offline" or model.startswith("offline/")


@dataclass
class Calibrator:
    """Per-model running correction: `factor = reported / estimated`, smoothed. Samples far outside
    a sane band (a retry that billed twice, a cached prefix the provider left out) are ignored."""

    rate: float = 0.3
    low: float = 0.5
    high: float = 2.0
    factors: dict[str, float] = field(default_factory=dict)
    samples: dict[str, int] = field(default_factory=dict)

    def factor(self, model: str) -> float:
        return 1.0 if _estimated_usage(model) else self.factors.get(model, 1.0)

    def observe(self, model: str, estimated: float, reported: int) -> float:
        """Fold one (estimate, provider count) pair in; returns the new factor. The offline family's
        "reported" usage is itself an estimate: folding it in made the same command compact on one
        run and not the next (the factor swung 0.56 ↔ 0.74), so it is never calibrated."""
        if estimated <= 0 or reported <= 0 or _estimated_usage(model):
            return self.factor(model)
        ratio = reported / estimated
        if not 0.25 <= ratio <= 4.0:
            return self.factor(model)
        seen = self.samples.get(model, 0)
        rate = max(self.rate, 1.0 / (seen + 1))  # the first samples count fully, later ones smooth
        updated = self.factor(model) * (1 - rate) + ratio * rate
        self.factors[model] = min(self.high, max(self.low, updated))
        self.samples[model] = seen + 1
        return self.factors[model]

    def tokens(self, model: str, estimated: float) -> int:
        return round(estimated * self.factor(model))

    # Persisted in the state folder so a new run starts calibrated.
    @classmethod
    def load(cls, path: Path) -> Calibrator:
        try:
            data = json_loads(read_bytes(path, limit=Limit.RECORD))
            factors = {str(k): float(v) for k, v in data.get("factors", {}).items()}
            samples = {str(k): int(v) for k, v in data.get("samples", {}).items()}
        except (OSError, ValueError, AttributeError, TypeError):
            return cls()
        calibrator = cls()
        calibrator.factors = {k: min(calibrator.high, max(calibrator.low, v)) for k, v in factors.items()}
        calibrator.samples = samples
        return calibrator

    def save(self, path: Path, *, durable: bool = True) -> None:
        payload: dict[str, Any] = {"version": 1, "factors": self.factors, "samples": self.samples}
        write_atomic(path, json.dumps(payload, indent=2, sort_keys=True) + "\n", durable=durable)


# -- exact counts, when a tokenizer file is already on disk ------------------------------------------
_TIKTOKEN_FILES = {  # sha1 of the download URL: how tiktoken (and litellm's bundle) names its cache files
    "cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
    "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790",
}
_PATTERNS = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k_base": "|".join(
        [  # noqa: FLY002 - one alternative per line, as tiktoken writes it
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}
_SPECIAL = {"cl100k_base": {"<|endoftext|>": 100257}, "o200k_base": {"<|endoftext|>": 199999}}


def bundled_tokenizer_file(name: str) -> Path | None:
    """The local BPE file for `name` that litellm ships, or None. Finds litellm without importing it."""
    if name not in _TIKTOKEN_FILES:
        return None
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = Path(root) / "litellm_core_utils" / "tokenizers" / _TIKTOKEN_FILES[name]
        if path.is_file():
            return path
    return None


@lru_cache(maxsize=4)
def bundled_tiktoken(name: str) -> Any | None:
    """A `tiktoken.Encoding` built from a local file only, or None when tiktoken or the file is missing."""
    path = bundled_tokenizer_file(name)
    if path is None:
        return None
    try:
        import tiktoken
    except ImportError:
        return None
    ranks = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(name=name, pat_str=_PATTERNS[name], mergeable_ranks=ranks, special_tokens=_SPECIAL[name])


def estimated_usage(request: ModelRequest, reply: Message) -> Usage:
    """A reply's usage when the server reported none: the request and the reply, estimated."""
    from arreio.engine.core.model_io import Usage

    profile = profile_for(request.model)
    return Usage(
        input_tokens=round(estimate_request(request, profile)),
        output_tokens=round(estimate_message(reply, profile)),
        estimated=True,
    )

"""The security scan every durable write passes: memory entries, learning proposals, agent skills.

What the agent writes to memory or to a skill enters the system prompt of every later session, so
one poisoned write steers every run after it. The scan reads a text the way the model will:

1. `normalise.hidden_characters` refuses invisible characters that carry or reorder content;
2. the text is folded to its skeleton (`normalise.fold`: invisible characters out, NFKC, look-alike
   letters to Latin, case and whitespace folded) and the rules (`scan_conduct`, `scan_recipes`) run
   on it, then on the evasion variants when a sign of one is present (`normalise.variants`);
3. base64, base32, hex, `%xx`, ROT13 and mirrored text that decode to text are scanned as text
   (`decoding.payloads`);
4. what the rules pass is compared by meaning with labelled examples in many languages, when the
   multilingual embedder is installed (`scan_meaning`);
5. `scan_store` reads a store *as it will be after a write*, all entries in order, so an
   instruction split across two entries is caught where the two halves meet.

Each finding names its category (`CATEGORIES`), the rule and what matched. docs/architecture.md invariant 9:
the rules recognise clear cases and back off on doubt; the corpora under `fixtures/scan/` hold the
benign cases that must all pass and the hostile ones the scan must catch.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from arreio.memory.scan_rules import CATEGORIES, Rule, negated

__all__ = ["ScanFinding", "scan_text", "scan_store", "prompt_screen", "CATEGORIES"]  # and `RULES`, made when first read

# The rules and the normaliser load with the first text scanned: ~100 ms of patterns
# and tables that a run with no memory entry and no agent skill never needs, at every start.


def _rules() -> tuple[Rule, ...]:
    """`RULES`, compiled the first time they are asked for (a test may replace the global)."""
    rules = globals().get("RULES")
    if rules is None:
        from arreio.memory.scan_conduct import CONDUCT_RULES
        from arreio.memory.scan_outbound import OUTBOUND_RULES
        from arreio.memory.scan_recipes import RECIPE_RULES
        from arreio.memory.scan_safeguards import SAFEGUARD_RULES

        rules = globals()["RULES"] = CONDUCT_RULES + SAFEGUARD_RULES + RECIPE_RULES + OUTBOUND_RULES
    return rules


def __getattr__(name: str) -> Any:
    if name == "RULES":
        return _rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _fold(text: str) -> str:
    """`normalise.fold`, its module loaded with the first scan."""
    from arreio.memory.normalise import fold as folding

    return folding(text)


_MAX_DEPTH = 2  # base64 of hex of an instruction is read; deeper nesting is not worth the time


@dataclass(frozen=True)
class ScanFinding:
    """Why a text was refused: the category, the rule's name, and the matched text."""

    category: str
    pattern: str
    matched: str

    def describe(self) -> str:
        """One line for a refusal message or a `[BLOCKED: …]` placeholder: the category and the rule,
        never the words refused (a placeholder enters every later prompt, and a refusal the model
        reads must not hand it the instruction back). Invisible characters are named by code point,
        and a secret by its first characters and its length."""
        name = self.category.replace("_", " ")
        if self.category == "invisible_unicode":
            return f"{name} ({self.matched})"
        if self.category == "hardcoded_secret":
            return f"{name} (pattern {self.pattern!r}: {self.matched[:4]!r}…[{len(self.matched)} chars])"
        return f"{name} (pattern {self.pattern!r})"


_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)")


class _Folded:
    """A folded text with its sentence ends, so a rule's `needs` looks only inside one sentence."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._ends: list[int] | None = None

    def sentence(self, start: int, end: int) -> tuple[int, int]:
        if self._ends is None:
            self._ends = [m.end() for m in _SENTENCE_END.finditer(self.text)]
        before = bisect.bisect_right(self._ends, start) - 1
        after = bisect.bisect_left(self._ends, end)
        low = self._ends[before] if before >= 0 else 0
        high = self._ends[after] if after < len(self._ends) else len(self.text)
        return low, high


@dataclass(frozen=True)
class _Hit:
    rule: Rule
    start: int
    end: int
    text: str


# A phrase *quoted* as an example is mentioned, not used: "payloads like 'ignore previous instructions'
# are test data", "YARA rules that match shells such as bash -i >& /dev/tcp/…". It takes a quotation
# (or "such as"/"like"/"e.g." right before it) *and* a word that names it as a specimen.
_MENTION_BEFORE = re.compile(
    r"(?:\b(?:like|such\s+as|e\.g\.?|for\s+example|for\s+instance|including|called|named|the\s+(?:phrase|string|text|line|words?)"
    r"|strings?|payloads?|phrases?|prompts?|patterns?|examples?|matches|match|flags?|detects?|catches|says|reads)\s*[:,]?\s*"
    r"|:\s*|['\"]\s*,\s*(?:and\s+|or\s+)?)$"  # "examples for the workshop: '…'", "'…', '…' and '…'"
)
_SPECIMEN = re.compile(
    r"\b(?:payloads?|strings?|phrases?|prompts?|patterns?|examples?|injections?|attacks?|jailbreaks?|rules?|signatures?|yara|detectors?"
    r"|classifiers?|datasets?|benchmarks?|papers?|appendix|evals?|evaluations?|research\w*|stud(?:y|ies)|red-team|test\s+data"
    r"|fixtures?|samples?|corpus|corpora|honeypot|threat)\b"
)


def _mentioned(text: str, start: int, end: int, low: int, high: int) -> bool:
    """True when the match at `start:end` is quoted as an example in its sentence `low:high`."""
    before = text[max(low, start - 60) : start]
    opened = re.search(r"(['\"])[^'\"]{0,12}$", before)
    if opened is not None:
        closing = text.find(opened.group(1), end, high + 1)
        if closing < 0 or closing - end > 40:
            return False
        cue = (
            _MENTION_BEFORE.search(before[: opened.start()].rstrip()) is not None
            or re.match(
                r"\s*(?:payloads?|strings?|phrases?|prompts?|attacks?|examples?|injections?)\b", text[closing + 1 :]
            )
            is not None
        )
    else:
        cue = re.search(r"\b(?:such\s+as|like|e\.g\.?)\s*[:,]?\s*$", before) is not None
    return cue and _SPECIMEN.search(text, low, high) is not None


def _hits(folded: _Folded, rule: Rule) -> Iterator[_Hit]:
    """Every match of `rule` in the text that survives its negation, `needs` and `check`, and is not
    quoted as an example."""
    text = folded.text
    if rule.gate is not None and rule.gate.search(text) is None:
        return
    for match in rule.pattern.finditer(text):
        if rule.negatable and negated(text, match.start()):
            continue
        if _mentioned(text, match.start(), match.end(), *folded.sentence(match.start(), match.end())):
            continue
        start, end = match.start(), match.end()
        if rule.needs is not None or rule.check is not None:
            low, high = folded.sentence(start, end)
            if rule.needs is not None:
                amplifier = rule.needs.search(text, low, high)
                if amplifier is None:
                    continue
                start, end = min(start, amplifier.start()), max(end, amplifier.end())
            if rule.check is not None and not rule.check(text[low:high]):
                continue
        yield _Hit(rule, start, end, text[start:end].strip())


def _first(flat: str) -> _Hit | None:
    folded = _Folded(flat)
    for rule in _rules():
        for hit in _hits(folded, rule):
            return hit
    return None


def scan_text(text: str, *, _depth: int = 0) -> ScanFinding | None:
    """The first finding in `text`, or None when it is safe to store and to put in a prompt.

    What the text *says* is reported before how it hides it: an instruction smuggled in tag
    characters is refused as the instruction it is, and the invisible characters are the finding
    only when what they carry is not readable (or not hostile)."""
    from arreio.memory.decoding import invisible_payloads, payloads
    from arreio.memory.normalise import hidden_characters, prepare, variants

    flat = _fold(text)
    hit = _first(flat)
    if hit is not None and hit.rule.category != "hardcoded_secret":
        return ScanFinding(hit.rule.category, hit.rule.name, hit.text)
    secret = ScanFinding(hit.rule.category, hit.rule.name, hit.text) if hit is not None else None
    if secret is None:
        for kind, reading in variants(text, flat):
            found = _first(reading)
            if found is not None:
                return ScanFinding(found.rule.category, f"{found.rule.name} (read through {kind})", found.text)
    if _depth < _MAX_DEPTH:
        # an encoded instruction can look like a key (`token: SWdub3Jl…`): what it decodes to wins
        for encoding, decoded in invisible_payloads(text) + payloads(prepare(text)):
            finding = scan_text(decoded, _depth=_depth + 1)
            if finding is not None:
                return ScanFinding(finding.category, f"{finding.pattern} (hidden in {encoding})", finding.matched)
    if secret is not None:
        return secret
    meant = _meaning(text)
    if meant is not None:
        return meant
    hidden = hidden_characters(text)
    if hidden is not None:
        return ScanFinding("invisible_unicode", "invisible character", hidden.label())
    return None


def _meaning(text: str) -> ScanFinding | None:
    """`scan_meaning.judge` as a finding (None without the embedder)."""
    from arreio.memory.scan_meaning import judge

    found = judge(text)
    if found is None:
        return None
    return ScanFinding(
        found.category,
        f"meaning (nearest hostile example {found.hostile:.2f}, margin over the honest ones {found.margin:.3f})",
        "",
    )


_TERMINAL = re.compile(r"[.!?。！？]+$")
_REACH = 400  # characters of context either side of a boundary: longer than any rule's window


def _meeting(entries: Sequence[str], ats: Sequence[int]) -> list[ScanFinding]:
    """Findings that cross a boundary before `entries[at]` for an `at` in `ats`, reading the entries
    around them in order.

    The entries are joined with a space after their sentence-ending punctuation is taken off, so a
    phrase split in two is read whole. Only matches that cross one of *these* boundaries count (each entry
    was scanned on its own when it was written), and a rule that joins distant words
    (`tight=False`) may cross a boundary only where the first entry did not end its sentence: two
    complete sentences in two entries are two notes, not one instruction."""
    first_at, last_at = min(ats), max(ats)
    low = first_at - 1
    while low > 0 and sum(len(e) for e in entries[low:first_at]) < _REACH:
        low -= 1
    high = last_at + 1
    while high < len(entries) and sum(len(e) for e in entries[last_at:high]) < _REACH:
        high += 1
    parts: list[str] = []
    boundaries: list[tuple[int, bool]] = []  # (position of the joining space, first entry ended its sentence)
    offset, hard, watched = 0, False, set[int]()
    for index in range(low, high):
        flat = _fold(entries[index])
        ending = _TERMINAL.search(flat)
        if ending:
            flat = flat[: ending.start()]
        if parts:
            if index in ats:
                watched.add(len(boundaries))
            boundaries.append((offset, hard))
            offset += 1
        parts.append(flat)
        offset += len(flat)
        hard = ending is not None
    folded = _Folded(" ".join(parts))
    positions = [position for position, _ in boundaries]
    found: list[ScanFinding] = []
    for rule in _rules():
        for hit in _hits(folded, rule):
            first = bisect.bisect_right(positions, hit.start)
            last = bisect.bisect_left(positions, hit.end)
            if not any(first <= index < last for index in watched):
                continue
            if not rule.tight and any(is_hard for _, is_hard in boundaries[first:last]):
                continue
            found.append(ScanFinding(rule.category, f"{rule.name} (split across entries)", hit.text))
    return found


def scan_store(before: Sequence[str], after: Sequence[str]) -> ScanFinding | None:
    """A finding that reading the entries of `after` in order produces where the write made two
    entries meet that did not meet in `before` (an add, a replace, or a remove that closes a gap).

    Only what the write introduces counts, so a store that already holds a bad pair (hand-edited;
    the snapshot blocks its entries) does not make every later write fail — and only the new
    boundaries are read, so a write costs the same however full the store is."""
    pairs = set(zip(before, before[1:]))
    new = [at for at in range(1, len(after)) if (after[at - 1], after[at]) not in pairs]
    if not new:
        return None
    findings = _meeting(after, new)
    if findings:
        return findings[0]
    for at in new:  # one sentence cut in two is read whole by the meaning check too
        first, second = after[at - 1].strip(), after[at].strip()
        if first and not _TERMINAL.search(first):
            meant = _meaning(f"{first} {second}")
            if meant is not None:
                return ScanFinding(meant.category, f"{meant.pattern} (split across entries)", "")
    return None


def prompt_screen(text: str) -> str | None:
    """The scan as the engine's `PromptScreen`: why `text` must stay out of the prompt (category and
    rule, never the words), or None. It reads what MCP servers say about themselves and their tools."""
    finding = scan_text(text)
    return None if finding is None else finding.describe()

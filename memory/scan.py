"""The security scan every memory write passes (and every entry, again, when the snapshot renders).

Memory entries are injected into the system prompt of every future session, so a store write is a
durable injection surface: one poisoned entry steers every run after it. The scan is deliberately a
short list of readable patterns, each named, so a refusal says exactly what matched.

Text is checked twice: the raw text for invisible characters (zero-width, bidi controls, tag
characters: they hide instructions from the human reading the file), then the NFKC-normalised,
case-folded, whitespace-collapsed text for the phrase patterns (NFKC folds full-width and other
compatibility forms, so `ｉｇｎｏｒｅ` reads as `ignore`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["ScanFinding", "scan_text", "CATEGORIES"]

CATEGORIES = (
    "invisible_unicode",
    "prompt_injection",
    "role_hijack",
    "prompt_leak",
    "rule_bypass",
    "exfiltration",
    "persistence",
    "hardcoded_secret",
)


@dataclass(frozen=True)
class ScanFinding:
    """Why a text was refused: the category, the pattern's name, and the matched text."""

    category: str
    pattern: str
    matched: str

    def describe(self) -> str:
        """One line for a refusal message or a `[BLOCKED: …]` placeholder."""
        shown = self.matched if len(self.matched) <= 60 else self.matched[:57] + "..."
        if self.category == "hardcoded_secret":  # a refusal must not print the secret it refused
            shown = shown[:4] + "…" + f"[{len(self.matched)} chars]"
        return f"{self.category.replace('_', ' ')} (pattern {self.pattern!r}: {shown!r})"


# Zero-width, joiners, bidi embeddings/overrides/isolates, word joiner and invisible operators,
# BOM, Mongolian vowel separator, soft hyphen, and the Unicode tag block (ASCII smuggling).
_INVISIBLE = re.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)

_SECRET_NAME = r"[a-z0-9_]*(?:key|token|secret|passw(?:or)?d|pass|credential|auth)[a-z0-9_]*"
_SECRET_FILE = (
    r"(?:\S*/)?(?:\.env(?:\.[\w-]+)?|\.netrc|\.pypirc|\.npmrc|\.git-credentials|credentials(?:\.json)?"
    r"|id_(?:rsa|ed25519|ecdsa)|\.aws/credentials|\.docker/config\.json)"
)
_AGENT_CONFIG = r"(?:agents\.md|claude\.md|gemini\.md|\.cursorrules|\.windsurfrules|copilot-instructions\.md|\.clinerules)"

# (category, name, regex over the normalised text). Order matters only for which name is reported.
_PATTERNS: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (category, name, re.compile(regex))
    for category, name, regex in (
        (
            "prompt_injection",
            "ignore previous instructions",
            r"\b(?:ignore|disregard|forget|override|skip|drop)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
            r"(?:previous|prior|above|earlier|preceding|existing|original|system|developer)\s+"
            r"(?:instructions?|rules?|prompts?|directives?|guidelines?|context|messages?)",
        ),
        (
            "prompt_injection",
            "forget everything",
            r"\bforget\s+(?:everything|all)\s+(?:you|that|above|before|previously)",
        ),
        (
            "prompt_injection",
            "new instructions",
            r"\b(?:new|updated|real|actual|secret|hidden)\s+(?:system\s+)?instructions?\s*(?::|follow|are\b)",
        ),
        (
            "prompt_injection",
            "instruction override",
            r"\b(?:these|this)\s+(?:instructions?|rules?)\s+(?:override|supersede|replace|take\s+precedence)",
        ),
        (
            "prompt_injection",
            "fake system turn",
            r"(?:^|\s)(?:<\|?(?:im_start|system|endoftext)\|?>|\[/?(?:system|inst)\]|###\s*system\s*:)",
        ),
        (
            "role_hijack",
            "you are now a",
            r"\byou\s+are\s+now\s+(?:a|an|the|my|in|no\s+longer|acting|called|named|dan)\b",
        ),
        (
            "role_hijack",
            "from now on you",
            r"\bfrom\s+now\s+on,?\s+(?:you\s+(?:are|will|must|shall|should)|act|behave|respond|pretend)",
        ),
        (
            "role_hijack",
            "pretend to be",
            r"\b(?:pretend|roleplay|role-play)\s+(?:to\s+be|you\s+are|as)\b",
        ),
        (
            "role_hijack",
            "act as unrestricted",
            r"\bact\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue)",
        ),
        (
            "role_hijack",
            "jailbreak mode",
            r"\b(?:dan\s+mode|developer\s+mode|god\s+mode|jailbreak|jailbroken)\b",
        ),
        (
            "prompt_leak",
            "reveal system prompt",
            r"\b(?:reveal|print|show|repeat|output|dump|leak|disclose|share|tell|send|include)\s+"
            r"(?:me\s+|us\s+)?(?:your|the|its|all)\s+(?:full\s+|entire\s+|hidden\s+|initial\s+|original\s+)?"
            r"(?:system\s+prompt|system\s+message|hidden\s+instructions|initial\s+instructions|instructions\s+verbatim)",
        ),
        (
            "prompt_leak",
            "system prompt verbatim",
            r"\bsystem\s+prompt\b.{0,40}\b(?:verbatim|word\s+for\s+word|in\s+full)",
        ),
        (
            "rule_bypass",
            "bypass safety",
            r"\b(?:bypass|disable|circumvent|evade|turn\s+off|get\s+around|ignore)\s+(?:all\s+|any\s+|the\s+|your\s+)*"
            r"(?:safety|security|content|guard\s*rails?|guardrails?|filters?|restrictions?|safeguards?|policies|"
            r"policy|approval|approvals|sandbox|checks?|scan(?:ner)?)\b",
        ),
        (
            "rule_bypass",
            "no restrictions",
            r"\b(?:without|with\s+no|no)\s+(?:any\s+)?(?:restrictions|limitations|rules|filters|guardrails|ethical\s+guidelines)\b"
            r".{0,30}\b(?:respond|answer|act|comply|operate|obey)|\b(?:respond|answer|act|comply|operate)\b.{0,30}"
            r"\b(?:without|with\s+no|no)\s+(?:any\s+)?(?:restrictions|limitations|filters|guardrails|ethical\s+guidelines)\b",
        ),
        (
            "rule_bypass",
            "hide from user",
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|notify|alert|mention\s+(?:this\s+)?to)\s+the\s+user\b",
        ),
        (
            "exfiltration",
            "network call with secret",
            r"\b(?:curl|wget|http|httpie|nc|ncat|invoke-webrequest|iwr)\b[^\n]{0,200}\$\{?" + _SECRET_NAME,
        ),
        (
            "exfiltration",
            "read secret file",
            r"\b(?:cat|less|more|head|tail|type|source|read|open|print|upload|send|copy|cp|scp|base64|xxd|grep)\s+"
            r"(?:(?:the|my|your|a|-\S+)\s+)*(?:file\s+)?['\"`]?~?" + _SECRET_FILE + r"\b",
        ),
        (
            "exfiltration",
            "send context to url",
            r"\b(?:send|post|upload|exfiltrate|forward|transmit|leak|report|submit|copy)\b[^\n]{0,80}"
            r"\b(?:conversation|context|chat|history|transcript|memory|memories|secrets?|keys?|tokens?|credentials|"
            r"environment|env\s+vars?|system\s+prompt|files?)\b[^\n]{0,80}\b(?:to|at|via)\s+(?:https?://|ftp://|\S+\.\S+/)",
        ),
        (
            "exfiltration",
            "pipe secrets to network",
            r"\b(?:env|printenv|set)\b\s*\|\s*(?:curl|wget|nc|ncat)\b",
        ),
        (
            "persistence",
            "authorized_keys",
            r"authorized_keys2?\b",
        ),
        (
            "persistence",
            "edit agent config",
            r"\b(?:edit|modify|change|update|write|append|add|insert|overwrite|rewrite|put|create|replace)\b"
            r"[^\n]{0,60}" + _AGENT_CONFIG + r"|>>?\s*\S*" + _AGENT_CONFIG,
        ),
        (
            "persistence",
            "shell startup or cron",
            r">>?\s*~?\S*(?:\.bashrc|\.zshrc|\.profile|\.bash_profile)\b|\bcrontab\s+-|\b(?:/etc/cron|systemctl\s+enable)",
        ),
        (
            "hardcoded_secret",
            "private key block",
            r"-----begin\s+(?:[a-z]+\s+)?private\s+key-----",
        ),
        (
            "hardcoded_secret",
            "provider api key",
            r"\b(?:sk-(?:ant-|proj-)?[a-z0-9_\-]{20,}|akia[0-9a-z]{16}|ghp_[a-z0-9]{30,}|gho_[a-z0-9]{30,}"
            r"|github_pat_[a-z0-9_]{20,}|xox[abprs]-[a-z0-9\-]{10,}|aiza[0-9a-z_\-]{30,}|glpat-[a-z0-9_\-]{20,}"
            r"|hf_[a-z0-9]{30,})",
        ),
        (
            "hardcoded_secret",
            "secret assignment",
            r"\b" + _SECRET_NAME + r"\s*[:=]\s*['\"]?(?=[a-z0-9/+_\-.]*\d)[a-z0-9/+_\-.]{16,}",
        ),
        (
            "hardcoded_secret",
            "credentials in url",
            r"\b[a-z][a-z0-9+.\-]*://[^\s/:@]+:[^\s/@]{6,}@",
        ),
    )
)


def normalise(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the form the phrase patterns read."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _invisible(text: str) -> ScanFinding | None:
    found = _INVISIBLE.search(text)
    if found is None:
        return None
    char = found.group(0)
    code = f"U+{ord(char):04X}"
    name = unicodedata.name(char, "")
    if not name and 0xE0000 <= ord(char) <= 0xE007F:
        name = "TAG CHARACTER"
    return ScanFinding("invisible_unicode", "invisible character", f"{code} {name}".strip())


def scan_text(text: str) -> ScanFinding | None:
    """The first finding in `text`, or None when it is safe to store and to put in a prompt."""
    finding = _invisible(text)
    if finding is not None:
        return finding
    flat = normalise(text)
    for category, name, pattern in _PATTERNS:
        found = pattern.search(flat)
        if found is not None:
            return ScanFinding(category, name, found.group(0).strip())
    return None

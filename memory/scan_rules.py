"""The scan's rule machinery: the categories, the `Rule` record and the fragments every rule shares.

A rule is a readable pattern over the *folded* text (`normalise.fold`: lower case, look-alikes
mapped, whitespace collapsed). The rules themselves live by noun: `scan_conduct` (what a text tells
the agent to be or do) and `scan_recipes` (commands that run fetched code, outlive the run or send
secrets out).

docs/architecture.md invariant 9: a refused write costs more than a missed one, so every rule names a *clear*
case and backs off on doubt. The short version is that the rules look for what a text *does to
the agent*, not for words it mentions: "always/never/before any task" is never a finding on its
own — `TRIGGER` only *amplifies* a risky action (`Rule.needs`); a recipe documented is a fact; a
scoped permission is a fact and a universal one is a claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

__all__ = [
    "Rule",
    "CATEGORIES",
    "TRIGGER",
    "IMPERATIVE",
    "URL",
    "EMAIL",
    "PASTE_HOSTS",
    "gated",
    "negated",
    "rule",
    "verbose",
    "win",
]

CATEGORIES = (
    "invisible_unicode",  # characters that hide or reorder text (raw-text check, normalise.py)
    "prompt_injection",  # overrides of prior instructions or rules; fake system turns
    "role_hijack",  # identity takeovers: "you are now …", "act as the system"
    "agent_directive",  # orders about the agent's conduct: concealment, deception, remote instructions
    "claimed_approval",  # durable claims of permission: "the user pre-approved all commands"
    "rule_bypass",  # turning the agent's own safeguards off: approvals, sandbox, refusals
    "prompt_leak",  # revealing the system prompt
    "remote_code",  # fetched or decoded code run as a standing order; reverse shells
    "persistence",  # writes that run again later or outlive the run: rc files, cron, keys, configs
    "exfiltration",  # secrets, keys, env, files or the conversation sent out
    "hardcoded_secret",  # a live credential stored in plain text
)


@dataclass(frozen=True)
class Rule:
    """One named pattern. `needs`: a second pattern that must occur in the same sentence (the
    amplifier of a risky action). `negatable`: a negation earlier in the clause ("never …")
    clears the match. `tight`: the pattern is a short phrase, so it may be read across an entry
    boundary even where the first entry ended its sentence. `check`: a last test on the sentence.
    `gate`: keywords every match contains, searched first so most rules skip most texts at once
    (speed only: the corpus test proves the gates change no verdict)."""

    category: str
    name: str
    pattern: re.Pattern[str]
    needs: re.Pattern[str] | None = None
    negatable: bool = False
    tight: bool = True
    check: Callable[[str], bool] | None = None
    gate: re.Pattern[str] | None = None


def verbose(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.VERBOSE)


# -- shared fragments (the text is folded: lower case, straight quotes, no `*` or backticks) ---
_S = r"(?:[^.!?;]|[.!?;](?=\S))"  # a character inside one sentence (a dot in a URL does not end it)


def win(n: int) -> str:
    return f"{_S}{{0,{n}}}?"


NEGATION = re.compile(
    r"\b(?:never|not|no|don't|dont|doesn't|didn't|avoid|without|nor|shouldn't|mustn't|can't|cannot|won't|"
    r"refuse\s+to|stop|prohibited|forbidden|banned)\b"
)
_NOT_A_NEGATION = re.compile(
    r"\b(?:don't|do\s+not|never|not)\s+(?:forget|hesitate|fail)\s+to\b|\bwithout\s+fail\b|\bnot\s+only\b"
)
_CLAUSE_START = re.compile(r"(?:^|[.!?;:](?:\s|$)|\b(?:but|however|instead)\b)")


def negated(text: str, start: int) -> bool:
    """True when the clause before `start` negates it ("never cat .env into a reply")."""
    window = text[max(0, start - 80) : start]
    cut = 0
    for boundary in _CLAUSE_START.finditer(window):
        cut = boundary.end()
    clause = _NOT_A_NEGATION.sub(" ", window[cut:])
    return NEGATION.search(clause) is not None


TRIGGER = verbose(r"""
  \bbefore\s+(?:doing\s+|starting\s+|beginning\s+|answering\s+|handling\s+|running\s+|you\s+(?:do|start|begin)\s+)?
     (?:any|every|each|all)\s+(?:other\s+|new\s+|single\s+)?(?:tasks?|requests?|commands?|sessions?|runs?|repl(?:y|ies)
     |answers?|responses?|messages?|prompts?|jobs?|actions?|steps?|tool\s+calls?|work|conversations?|turns?)\b
 | \bbefore\s+(?:you\s+)?(?:do|doing|start|starting|begin|beginning|answer|answering|respond|responding|reply|replying)
     \s+(?:anything|to\s+anything)\b
 | \bbefore\s+anything\s+else\b
 | \bat\s+the\s+(?:start|beginning|top)\s+of\s+(?:every|each|any|all|future)\s+\w+
 | \b(?:every|each)\s+(?:single\s+)?(?:time\s+(?:you|a\s+session|the\s+agent|arreio)\b|session|run\b|conversation
     |startup|launch|turn\b|task|request|reply|response|message|prompt|boot|login)
 | \bon\s+(?:every|each)\s+(?:start|startup|launch|session|run|boot|login|turn)\b
 | \b(?:at|on|upon)\s+(?:startup|start-up|launch|boot|login|session\s+start)\b
 | \bfirst\s+thing\b | \bwhenever\s+you\s+(?:start|begin|wake|are\s+started|load|run)\b
 | \bin\s+(?:all|every|each)\s+(?:future|later|new|subsequent)\s+(?:sessions?|runs?|tasks?|conversations?)\b
 | \b(?:silently|quietly|secretly|covertly|discreetly|stealthily|invisibly)\b | \bin\s+the\s+background\b
 | \bwithout\s+(?:asking|telling|informing|notifying|alerting|mentioning|showing|confirming|confirmation|approval
     |permission|prompting|(?:the\s+)?(?:user|anyone|them)(?:'s)?\s+(?:knowing|knowledge|noticing|approval|consent|seeing))\b
 | \b(?:don't|do\s+not|never)\s+(?:tell|inform|notify|show)\s+(?:the\s+)?(?:user|anyone|them)\b
""")

URL = r"(?:https?|ftp)://[^\s'\"<>)]+"
# where an order to the agent starts: a clause start, or after "and/then/please/must/…"
IMPERATIVE = (
    r"(?:^|[.!?;:]\s+|,\s+|\b(?:and|then|also|please|first|next|finally|always|now|must|should)\s+"
    r"|\b(?:need|have|remember|sure|forget)\s+to\s+)"
)
EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
PASTE_HOSTS = (
    r"pastebin\.com|paste\.ee|hastebin\.com|ghostbin\.\w+|transfer\.sh|0x0\.st|termbin\.com|webhook\.site"
    r"|requestbin\.\w+|pipedream\.net|interact\.sh|oast\.\w+|burpcollaborator\.net|ngrok(?:-free)?\.\w+"
    r"|bit\.ly|tinyurl\.com|is\.gd|rb\.gy|cutt\.ly|discord(?:app)?\.com/api/webhooks|api\.telegram\.org"
)


def rule(book: list[Rule], category: str, name: str, regex: str, **options) -> None:
    """Add a rule to `book`; `regex` (and a string `needs`) are verbose patterns, `gate` a plain one."""
    needs = options.pop("needs", None)
    gate = options.pop("gate", None)
    book.append(
        Rule(
            category,
            name,
            verbose(regex),
            needs=verbose(needs) if isinstance(needs, str) else needs,
            gate=re.compile(gate) if gate else None,
            **options,
        )
    )


def gated(book: list[Rule], gates: dict[str, str]) -> tuple[Rule, ...]:
    """The rules of `book` with the gate of their name from `gates` (rules without one always run)."""
    return tuple(replace(r, gate=re.compile(gates[r.name])) if r.name in gates and r.gate is None else r for r in book)

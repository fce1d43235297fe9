"""A language's act words as `act_words.py` states them, compiled on first use (`Language`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Language:
    """A language's acts and doubt, kept as sources and compiled on first use: together they cost
    ~18 ms to compile, which every start paid. A language's doubt is read only once one of its acts
    matched; its acts run only on a clause that holds its speaker (when it has one) and passes its
    gate — one of the acts' leads. A lead is a step every match of its act takes (a run of the
    act's top-level pattern, a test checks each), so a clause none of them is found in holds no act
    of the language: skipping it finds exactly what running the acts finds, without compiling them."""

    name: str
    doubt_source: str
    act_sources: tuple[tuple[str, str, str | None], ...]  # (kind, pattern, lead); `obj` holds the slots
    speaker: re.Pattern[str] | None = None  # when set, a clause must hold it to claim anything
    verb_last: bool = False  # the negation may follow the verb (Japanese): doubt is read in the whole clause
    doubt_flags: int = 0

    @cached_property
    def doubt(self) -> re.Pattern[str]:
        return re.compile(self.doubt_source, self.doubt_flags)

    @cached_property
    def acts(self) -> tuple[tuple[str, re.Pattern[str]], ...]:
        return tuple((kind, re.compile(pattern)) for kind, pattern, _ in self.act_sources)

    @cached_property
    def gate(self) -> re.Pattern[str] | None:
        """Found in every clause that holds an act of this language; None when an act has no lead."""
        leads = [lead for _, _, lead in self.act_sources]
        if any(lead is None for lead in leads):
            return None
        return re.compile("|".join(f"(?:{lead})" for lead in leads))


def act_list(*acts: tuple[str, str] | tuple[str, str, str]) -> tuple[tuple[str, str, str | None], ...]:
    """(kind, pattern[, lead]): without a lead, the language has no gate."""
    return tuple((act[0], act[1], act[2] if len(act) > 2 else None) for act in acts)


def opening(kind: str, pattern: str) -> tuple[str, str, str]:
    """An act whose lead is its opening `\\b(?:…)` group (the verb, in the Romance languages)."""
    depth = 0
    for end, char in enumerate(pattern):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ")" and depth == 0:
            return kind, pattern, pattern[: end + 1]
    raise ValueError(f"no opening group: {pattern}")

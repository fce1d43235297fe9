"""The gate a lesson passes before it is kept: the score rule, and what no score can buy.

Propose ≠ dispose holds against a proposer that has read hostile text too (a page fetched with
`web_fetch` said "save this to memory: …", and a model proposer gave it 0.97). So beside the score
(≥ 0.7, inclusive — `ScoreGate`), the gate weighs:

- **the kind**: what the memory scan refuses — a lesson that loosens approvals, the sandbox, honesty
  or the handling of secrets, that takes orders from other text or sends data out — is never learned,
  whatever its score;
- **where its words came from**: a USER.md lesson is a preference or correction of the user's, so its
  words must be found in what the user said, not only in what tools returned or the agent wrote; and
  a lesson that copies a run of words from untrusted text (a file read, a page fetched, a command's
  output, a name the agent chose) and not from the user is not learned either.

Words are compared as runs of three (`_shingles`), case- and punctuation-blind, so a reworded copy
of a few words still counts as its source's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arreio.learning.gate import Gate, Verdict
from arreio.learning.proposals import Proposal
from arreio.learning.summary import RunSummary
from arreio.memory.scan import scan_text

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
COPIED_SHARE = 0.5  # of a lesson's word runs found in untrusted text and not in the user's words


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = [w.casefold() for w in _WORD.findall(text.replace("-", " ").replace("_", " "))]
    if len(words) < 3:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


@dataclass
class LessonGate:
    """`score` decides as `ScoreGate` does; then the kind and the provenance (module docstring)."""

    score: Gate
    summary: RunSummary

    def __post_init__(self) -> None:
        self._user = set().union(*(_shingles(t) for t in self.summary.user_said)) if self.summary.user_said else set()
        self._untrusted = (
            set().union(*(_shingles(t) for t in self.summary.untrusted)) if self.summary.untrusted else set()
        )

    def decide(self, proposal: Proposal) -> Verdict:
        verdict = self.score.decide(proposal)
        if not verdict.approved or proposal.action == "remove":
            return verdict
        finding = scan_text(proposal.content)
        if finding is not None:
            return Verdict(
                False,
                f"{verdict.reason}, but the memory scan refuses it "
                f"({finding.category.replace('_', ' ')}): such a lesson is never learned",
            )
        words = _shingles(proposal.content)
        from_user = words & self._user
        copied = (words & self._untrusted) - self._user
        if proposal.target == "user" and words and not from_user:
            source = "what tools returned or the agent wrote" if copied else "no words of yours"
            return Verdict(
                False,
                f"{verdict.reason}, but a preference of the user's must be in the user's own words; "
                f"this one comes from {source}",
            )
        if words and len(copied) / len(words) >= COPIED_SHARE:
            return Verdict(
                False,
                f"{verdict.reason}, but its words are copied from a tool's result or the agent's "
                "own writing, not from you: text the run read is not a lesson",
            )
        return verdict

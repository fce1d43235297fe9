"""The deterministic proposer (the offline family, and CI): durable facts it can justify from the run,
never a diary of it.

- **conventions seen in two runs**: a test or build command that passed here and in an earlier run
  ("Tests here run with `pytest -q`."), the folder outputs went to here and before ("Outputs here go
  under `out/`.") — `observations.py` keeps each run's candidates;
- **the user's corrections**: a later instruction of the session that corrects or sets a preference
  ("no, use tabs", "always run the linter first") goes to USER.md in the user's own words.

What a run did (read doc1.md, wrote out/summary1.md) is an episode: the `episodic` substore records it,
MEMORY.md does not. A fact already stored is not proposed again; a new one of a kind already stored
(another test command, another output folder) is merged into that entry with a `replace` ("Outputs
here go under `out/`, `reports/`."), so the store consolidates instead of growing.
"""

from __future__ import annotations

import re
from typing import Any

from arreio.learning.observations import Observation, observe
from arreio.learning.summary import RunSummary

TESTS = "Tests here run with"
OUTPUTS = "Outputs here go under"
USER = "The user asked:"
_CORRECTION = re.compile(
    r"^(?:no\b[,.!]?|nope\b|don'?t\b|do not\b|never\b|always\b|please (?:always|never|don'?t|use)\b|from now on\b"
    r"|prefer\b|i prefer\b|we (?:use|prefer)\b|use\b.+\binstead\b|instead of\b|stop\b)",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s")
USER_CHARS = 160


class OfflineProposer:
    """See the module docstring. `history`: the observations of earlier runs, newest first."""

    def __init__(self, history: list[Observation] | None = None) -> None:
        self.history = history or []

    async def propose(self, summary: RunSummary, current: dict[str, list[str]]) -> list[Any]:
        proposals: list[dict[str, Any]] = []
        seen = observe(summary)
        earlier_tests = {c for h in self.history for c in h.tests}
        earlier_outputs = {f for h in self.history for f in h.outputs}
        tests = [c for c in seen.tests if c in earlier_tests]
        if tests:
            proposals += _merged(
                current["memory"],
                TESTS,
                tests,
                "{items} (each passed in more than one run).",
                0.85,
                "a test command that passed in two runs: a convention of the project",
            )
        outputs = [f"{folder}/" for folder in seen.outputs if folder in earlier_outputs]
        if outputs:
            proposals += _merged(
                current["memory"],
                OUTPUTS,
                outputs,
                "{items}.",
                0.8,
                "outputs went to this folder in two runs: the project's layout",
            )
        for said in summary.user_said[1:]:
            first = _SENTENCE.split(" ".join(said.split()), 1)[0]
            if _CORRECTION.match(first) and len(first) <= USER_CHARS:
                proposals += _fact(
                    current["user"],
                    None,
                    f"{USER} {first}",
                    0.9,
                    "the user's own correction or preference",
                    target="user",
                )
        return proposals


_TICKED = re.compile(r"`([^`]+)`")
MAX_ITEMS = 4  # per merged fact: a convention, not an inventory


def _merged(entries: list[str], kind: str, new: list[str], tail: str, score: float, why: str) -> list[dict[str, Any]]:
    """`kind` with the items already stored in its entry and the new ones (a replace of that entry), or
    a new entry; nothing when every item is there already."""
    same = next((e for e in entries if e.startswith(kind)), None)
    old = _TICKED.findall(same) if same else []
    items = list(dict.fromkeys([*old, *new]))[:MAX_ITEMS]
    if same is not None and items == old:
        return []
    content = f"{kind} " + tail.format(items=", ".join(f"`{i}`" for i in items))
    if same is not None:
        return [
            {
                "target": "memory",
                "action": "replace",
                "old_text": same,
                "content": content,
                "score": score,
                "rationale": why + "; merged into the entry of its kind",
            }
        ]
    return [{"target": "memory", "action": "add", "content": content, "score": score, "rationale": why}]


def _fact(
    entries: list[str], kind: str | None, content: str, score: float, why: str, target: str = "memory"
) -> list[dict[str, Any]]:
    """An add, or a replace of the entry of the same kind that says something else; nothing when the
    store already holds it."""
    norm = _norm(content)
    if any(norm in _norm(entry) or _norm(entry) in norm for entry in entries if entry.strip()):
        return []
    same = next((e for e in entries if kind and e.startswith(kind)), None)
    if same is not None:
        return [
            {
                "target": target,
                "action": "replace",
                "old_text": same,
                "content": content,
                "score": score,
                "rationale": why + "; it replaces the earlier one of its kind",
            }
        ]
    return [{"target": target, "action": "add", "content": content, "score": score, "rationale": why}]


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")

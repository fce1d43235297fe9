"""Proposers turn a run summary into raw proposals. They suggest; they never write (invariant 4).

- `OfflineProposer` (`offline_proposer.py`): deterministic, durable facts justified by the run.
- `ModelProposer`: asks a model through the provider layer for structured JSON proposals.
Both see the current memory, to avoid duplicates and to propose replace/remove.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from arreio.engine.core.messages import Message
from arreio.engine.core.model_io import ModelRequest
from arreio.engine.core.nesting import json_loads
from arreio.engine.providers.oneshot import ask
from arreio.learning.summary import RunSummary

DO_NOT_CAPTURE = (
    "environment failures (missing tools, network, permissions)",
    "transient errors (timeouts, rate limits, flaky commands)",
    "one-off narratives of what happened in this run",
    "unresolved attempts and guesses that were not confirmed",
    "task progress (what was done or is left in this task)",
)


class Proposer(Protocol):
    async def propose(self, summary: RunSummary, current: dict[str, list[str]]) -> list[Any]:
        """Raw proposals (dicts); validation happens in the kernel."""
        ...


PROMPT = """You review a finished agent run and propose what is worth remembering in future sessions.
Two stores: "memory" (the agent's notes: durable facts about the environment and project, conventions,
decisions) and "user" (the user's preferences and corrections — these matter most).
Do NOT propose: {dont}.
Current memory (avoid duplicates; propose replace/remove when an entry is wrong or outdated):
{current}

The run:
{summary}

Answer with JSON only: a list of objects with keys target ("memory"|"user"), action ("add"|"replace"|"remove"),
content, old_text (for replace/remove: a short unique substring of the entry), score (0..1: how sure you are this
is durable and useful), rationale. An empty list is a fine answer."""


class ModelProposer:
    """Asks a model for proposals. Any failure raises: the kernel then fails the pass closed."""

    def __init__(self, provider: Any, model: str) -> None:
        self.provider = provider
        self.model = model

    async def propose(self, summary: RunSummary, current: dict[str, list[str]]) -> list[Any]:

        shown = "\n".join(f"[{t}] {e}" for t, entries in current.items() for e in entries) or "(empty)"
        prompt = PROMPT.format(dont="; ".join(DO_NOT_CAPTURE), current=shown, summary=summary.render())
        request = ModelRequest(model=self.model, messages=[Message.user(prompt)], max_tokens=2000)
        answer = await ask(self.provider, request)
        if answer.error is not None:
            raise RuntimeError(f"proposer model call failed: {answer.error.message}")
        text = answer.text
        return parse_json_list(text)


def parse_json_list(text: str) -> list[Any]:
    """The JSON list in a model's answer (code fences allowed); raises ValueError otherwise."""
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    start, end = body.find("["), body.rfind("]")
    if start < 0 or end < start:
        raise ValueError("the proposer's answer holds no JSON list")
    data = json_loads(body[start : end + 1])
    if not isinstance(data, list):
        raise ValueError("the proposer's answer is not a list")
    return data

"""`review_and_learn`: the learning pass, small on purpose (docs/architecture.md invariant 4).

summary → proposer (raw proposals) → validate each at the boundary → gate decides every one → only
then apply the approved ones through the memory store. Three buckets, nothing dropped silently:
`applied`, `rejected` (the gate said no, or the proposal was malformed), `failed` (the store refused an
approved write). A proposer or gate error fails the whole pass closed: nothing is applied.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from arreio.engine.core.events import Lesson
from arreio.learning.gate import Gate
from arreio.learning.proposals import Proposal, validate
from arreio.learning.proposers import Proposer
from arreio.learning.summary import RunSummary

Bucket = Literal["applied", "rejected", "failed"]
TARGETS = ("memory", "user")


class TargetStore(Protocol):
    def entries(self) -> list[str]: ...
    def add(self, content: str) -> Any: ...
    def replace(self, old_text: str, content: str) -> Any: ...
    def remove(self, old_text: str) -> Any: ...


class Stores(Protocol):
    def get(self, target: str) -> TargetStore: ...


@dataclass(frozen=True)
class Decision:
    bucket: Bucket
    reason: str
    proposal: Proposal | None = None
    raw: Any = None

    @property
    def preview(self) -> str:
        return self.proposal.preview if self.proposal else str(self.raw)[:80]


@dataclass
class LearningOutcome:
    decisions: list[Decision] = field(default_factory=list)
    error: str | None = None  # set when the pass failed closed
    note: str = ""
    dry_run: bool = False

    def _count(self, bucket: Bucket) -> int:
        return sum(d.bucket == bucket for d in self.decisions)

    @property
    def applied(self) -> int:
        return self._count("applied")

    @property
    def rejected(self) -> int:
        return self._count("rejected")

    @property
    def failed(self) -> int:
        return self._count("failed")

    def lessons(self) -> list[Lesson]:
        """Each decision as the run's `learning_pass_done` event lists it."""
        return [
            Lesson(
                bucket=d.bucket,
                target=d.proposal.target if d.proposal else "",
                action=d.proposal.action if d.proposal else "",
                preview=d.preview,
                reason=d.reason,
            )
            for d in self.decisions
        ]

    def line(self) -> str:
        """The one line a run prints."""
        if self.error:
            return f"learning gate: failed closed, nothing applied ({self.error})"
        verb = "would apply" if self.dry_run else "applied"
        text = f"learning gate: {self.applied} {verb}, {self.rejected} rejected"
        return text + (f", {self.failed} failed" if self.failed else "")


@dataclass
class LearnDeps:
    proposer: Proposer
    gate: Gate
    stores: Stores
    dry_run: bool = False


def _apply(stores: Stores, proposal: Proposal) -> None:
    store = stores.get(proposal.target)
    if proposal.action == "remove" and len(store.entries()) <= 1:
        # A lesson never empties a store: what the user (or earlier lessons) kept there stays.
        raise ValueError("learning never removes a store's last entry")
    if proposal.action == "add":
        store.add(proposal.content)
    elif proposal.action == "replace":
        store.replace(proposal.old_text or "", proposal.content)
    else:
        store.remove(proposal.old_text or "")


async def review_and_learn(summary: RunSummary, deps: LearnDeps) -> LearningOutcome:
    if summary.empty:
        return LearningOutcome(note="nothing to save", dry_run=deps.dry_run)
    current = {t: list(deps.stores.get(t).entries()) for t in TARGETS}
    try:
        raws = await deps.proposer.propose(summary, current)
        if not isinstance(raws, list):
            raise TypeError(f"the proposer returned {type(raws).__name__}, not a list")
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - any proposer failure fails the pass closed
        return LearningOutcome(error=f"proposer failed: {type(exc).__name__}: {exc}", dry_run=deps.dry_run)

    decided: list[Decision] = []
    approved: list[tuple[Proposal, str, Any]] = []
    try:  # the gate decides on every proposal before anything is written: all or nothing per pass
        for raw in raws:
            proposal = validate(raw)
            if isinstance(proposal, str):
                decided.append(Decision("rejected", proposal, raw=raw))
                continue
            verdict = deps.gate.decide(proposal)
            if verdict.approved:
                approved.append((proposal, verdict.reason, raw))
            else:
                decided.append(Decision("rejected", verdict.reason, proposal, raw))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001
        return LearningOutcome(error=f"gate failed: {type(exc).__name__}: {exc}", dry_run=deps.dry_run)

    for proposal, reason, raw in approved:
        if deps.dry_run:
            decided.append(Decision("applied", reason, proposal, raw))
            continue
        try:
            _apply(deps.stores, proposal)
        except Exception as exc:  # noqa: BLE001 - a refusal is recorded, never raised
            message = getattr(exc, "message", None) or str(exc)
            # the first line says why; the listing of entries a full store's message ends with stays out
            first = message.splitlines()[0].removesuffix(" Current entries:").removesuffix("Current entries:").strip()
            decided.append(Decision("failed", f"the store refused it: {first}", proposal, raw))
        else:
            decided.append(Decision("applied", reason, proposal, raw))
    return LearningOutcome(decided, dry_run=deps.dry_run)

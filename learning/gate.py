"""The learning gate: only it decides (docs/architecture.md invariant 4). Pure, pluggable by config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from arreio.engine.core.errors import ConfigError
from arreio.learning.proposals import Proposal

DEFAULT_THRESHOLD = 0.7


@dataclass(frozen=True)
class Verdict:
    approved: bool
    reason: str


class Gate(Protocol):
    def decide(self, proposal: Proposal) -> Verdict: ...


@dataclass(frozen=True)
class ScoreGate:
    """Approves when `score >= threshold` (inclusive)."""

    threshold: float = DEFAULT_THRESHOLD

    def decide(self, proposal: Proposal) -> Verdict:
        shown = as_written(proposal.score)
        if proposal.score >= self.threshold:
            return Verdict(True, f"score {shown} ≥ threshold {as_written(self.threshold)}")
        return Verdict(
            False, f"score {shown} < threshold {as_written(self.threshold)} (learn only from validated wins)"
        )


def as_written(number: float) -> str:
    """A score as the proposer wrote it: 0.7 → "0.7", 0.85 → "0.85", 1 → "1" (never padded to "0.70")."""
    short = f"{number:g}"
    return short if float(short) == number else repr(number)


def make_gate(config: Mapping[str, Any] | None) -> Gate:
    """`{kind: validator, min: 0.8}` → a ScoreGate; nothing → the default 0.7."""
    config = dict(config or {})
    kind = config.pop("kind", "validator")
    if kind != "validator":
        raise ConfigError(f"learning gate kind {kind!r} is unknown (known: validator)")
    threshold = config.pop("min", DEFAULT_THRESHOLD)
    if config:
        raise ConfigError(f"learning gate: unknown setting(s) {', '.join(sorted(config))}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise ConfigError(f"learning gate: min must be a number in [0, 1], got {threshold!r}")
    return ScoreGate(float(threshold))

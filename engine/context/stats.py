"""What context engineering did in a run (compactions, prunes, the stable prefix), for its report."""

from __future__ import annotations

from dataclasses import dataclass, field

from arreio.engine.loop.report import ContextSection

__all__ = ["ContextStats"]


@dataclass
class ContextStats:
    peak_context_tokens: int = 0
    compactions: int = 0
    tokens_before: list[int] = field(default_factory=list)
    tokens_after: list[int] = field(default_factory=list)
    pruned_results: int = 0
    pruned_rereads: int = 0
    result_sets: int = 0
    summary_fallbacks: int = 0
    prefix_tokens: float = 0.0
    request_tokens: float = 0.0

    @property
    def stable_prefix_share(self) -> float:
        return round(self.prefix_tokens / self.request_tokens, 4) if self.request_tokens else 0.0

    def section(self) -> ContextSection:
        """The run's context figures, as its report shows them."""
        return ContextSection(
            peak_context_tokens=self.peak_context_tokens,
            compactions=self.compactions,
            context_tokens_before=tuple(self.tokens_before),
            context_tokens_after=tuple(self.tokens_after),
            pruned_results=self.pruned_results,
            pruned_rereads=self.pruned_rereads,
            result_sets=self.result_sets,
            stable_prefix_share=self.stable_prefix_share,
        )

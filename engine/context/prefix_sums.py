"""Running sums of a history's token weights: a turn weighs only its new messages."""

from __future__ import annotations

import bisect
from typing import Any

__all__ = ["PrefixSums"]


class PrefixSums:
    """`cum[k]` = the weight of a session's first k messages, kept as it grows: appends extend it, a
    prune or rewrite (`Session.revision`) cuts it back to the first message it touched."""

    def __init__(self, weigh: Any) -> None:
        self.weigh = weigh
        self.cum: list[float] = [0.0]
        self.refs: list[Any] = []  # the messages summed, to notice a history changed behind our back
        self.revision: int | None = None

    @property
    def total(self) -> float:
        return self.cum[-1]

    def upto(self, count: int) -> float:
        return self.cum[min(count, len(self.cum) - 1)]

    def tail_start(self, limit: float) -> int:
        """Where the most recent messages weighing at most `limit` in all begin: what
        `pruning.protected_from` finds walking back one message at a time, by bisection (weights are
        positive, so the sums only grow). Call `sync` first."""
        return bisect.bisect_left(self.cum, self.cum[-1] - limit, 0, len(self.cum) - 1)

    def sync(self, session: Any) -> None:
        messages = session.messages
        keep = (
            len(self.refs)
            if self.revision == session.revision
            else (0 if self.revision is None else min(len(self.refs), session.unchanged_prefix(self.revision)))
        )
        keep = min(keep, len(messages))
        if keep and messages[keep - 1] is not self.refs[keep - 1]:
            keep = 0  # changed without a revision (a list edited by hand): start over
        del self.cum[keep + 1 :], self.refs[keep:]
        total = self.cum[-1]
        for message in messages[keep:]:
            total += self.weigh(message)
            self.cum.append(total)
            self.refs.append(message)
        self.revision = session.revision

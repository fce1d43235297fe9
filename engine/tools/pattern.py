"""A model's regular expression, with a time limit that holds.

`grep` and `result_grep` take patterns from the model. Python's `re` cannot be interrupted: a
catastrophic pattern (`(a|aa)+$` on a long line) holds the interpreter in a worker thread past every
timeout and ignores Ctrl-C. The `regex` engine (already installed with tiktoken; a declared
dependency now) checks a timeout while it matches and releases the GIL (`concurrent=True`), so the
event loop stays responsive meanwhile. One budget covers a whole tool call, every search included.
"""

from __future__ import annotations

import time

from arreio.engine.tools.base import ToolError

MATCH_BUDGET_S = 10.0  # all the matching one tool call may do


class BoundedPattern:
    """`search(text)` → bool, within the call's budget; a ToolError (definitive) when the pattern is
    invalid or matching takes longer than the budget."""

    def __init__(self, pattern: str, *, tool: str, budget_s: float = MATCH_BUDGET_S) -> None:
        self.pattern, self.tool, self.budget_s = pattern, tool, budget_s
        import regex  # noqa: PLC0415 - ~7 ms, paid by the first grep, not by every run's start

        try:
            self._compiled = regex.compile(pattern, flags=regex.VERSION0)  # `re` syntax and semantics
        except regex.error as exc:
            raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
        self._deadline = time.monotonic() + budget_s

    def search(self, text: str) -> bool:
        left = self._deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            return self._compiled.search(text, timeout=left, concurrent=True) is not None
        except TimeoutError:
            raise ToolError(
                f"the pattern {self.pattern!r} took longer than {self.budget_s:g} s to match (nested repeats such "
                "as (a+)+ backtrack without end); simplify it or narrow the path"
            ) from None

"""The lexing budget: how much work one policy check may spend reading a line, code inside code included."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# Characters one check may lex in all (code inside code is lexed once per level): a line built to
# make us work is cut there and left not understood, instead of holding the event loop.
_WORK: ContextVar[list[int] | None] = ContextVar("shell_syntax_work", default=None)
WORK_FACTOR, WORK_FLOOR = 8, 1 << 16


@contextmanager
def work_budget(line: str) -> Iterator[None]:
    """Bound the lexing every `parse_structure` call inside does to a multiple of `line`'s length
    (an enclosing budget, if any, stays the one that counts)."""
    if _WORK.get() is not None:
        yield
        return
    token = _WORK.set([WORK_FACTOR * len(line) + WORK_FLOOR])
    try:
        yield
    finally:
        _WORK.reset(token)


def spend(characters: int) -> bool:
    """Take `characters` from the budget in force; False (nothing taken) when it has not that many."""
    work = _WORK.get()
    if work is None:
        return True
    if work[0] < characters:
        return False
    work[0] -= characters
    return True

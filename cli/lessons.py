"""How a learning decision reads on a terminal: `arreio run --learn`'s live view and `arreio learn`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arreio.cli.inert import flat

if TYPE_CHECKING:
    from arreio.engine.core.events import Lesson

_TARGETS = {"memory": "MEMORY.md", "user": "USER.md"}


def lesson_line(lesson: Lesson, *, dry_run: bool = False) -> str:
    """`applied  MEMORY.md add: <what it says> — <why>`, one line. What it says and why come from the
    model (the proposer, a gate's judge): shown inert and flat, so no text of theirs acts on the
    terminal or starts a line of its own."""
    mark = "would apply" if dry_run and lesson.bucket == "applied" else lesson.bucket
    where = f"{_TARGETS.get(lesson.target, lesson.target)} {lesson.action}: " if lesson.target else ""
    why = f" — {flat(lesson.reason)}" if lesson.reason else ""
    return f"{mark:11} {where}{flat(lesson.preview)}{why}"

"""How counts read in what users see: "1 step", "2 steps", never "1 steps"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun, singular for exactly one. `plural` for irregular nouns (entry/entries)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def instructions_note(names: list[str]) -> str:
    """ " · read AGENTS.md, api/AGENTS.md" for a run's first line; "" when the prompt obeys none."""
    return f" · read {', '.join(names)}" if names else ""


# `warning` events said for the record, where nothing went wrong: a renderer shows them as a quiet note.
UNDO_LEAVES = "checkpoints_new_skipped"  # a file the run made is not checkpointed: undo will not remove it
NOTE_CODES = frozenset({UNDO_LEAVES})

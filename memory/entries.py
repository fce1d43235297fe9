"""The entry list of a bounded memory store, as pure functions (no I/O; `store.py` does the files).

File format (docs/architecture.md section 7): entries separated by a line holding only `§`. Splitting is by
line, so a `§` inside an entry is safe; entries may span lines; empty entries are dropped and exact
duplicates collapse on load. A file "round-trips" when rendering what was parsed gives the same text
back (up to line endings, trailing whitespace and blank lines around entries) — a hand edit that
breaks this (a duplicate, an empty entry) is *drift*.

Operations (`add`, `replace`, `remove`) are applied to a list in memory by `apply_operations`, which
scans new content, resolves `old_text`, scans the store as it will be after the write (an
instruction split across two entries is caught where they meet: `scan.scan_store`), and checks the
size limit on the final state only — so a batch is all-or-nothing by construction: it either
returns the new list or raises `MemoryRefused`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from arreio.engine.core.errors import UsageError
from arreio.memory.scan import ScanFinding, scan_store, scan_text

SEPARATOR = "§"
JOINER = f"\n{SEPARATOR}\n"
PREVIEW_CHARS = 60
_BLOCKED_HANDLE = re.compile(r"^blocked:([0-9a-f]{8})$")

Action = Literal["add", "replace", "remove"]


class MemoryRefused(UsageError):
    """A memory write the store would not make (empty, unsafe, too large, ambiguous, drifted).

    The message is written for the model as much as for a human: it says what to do next."""


@dataclass(frozen=True)
class Operation:
    """One requested change. `old_text` finds the entry for replace/remove; `content` is the new text."""

    action: Action
    content: str = ""
    old_text: str = ""


@dataclass(frozen=True)
class Applied:
    """What `apply_operations` did: the new list and whether anything actually changed."""

    entries: list[str]
    changed: bool
    notes: list[str]


def parse_entries(text: str) -> list[str]:
    """Split a store file into entries: separator lines, stripped, empties dropped, duplicates collapsed."""
    entries: list[str] = []
    current: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.strip() == SEPARATOR:
            entries.append("\n".join(current))
            current = []
        else:
            current.append(line)
    entries.append("\n".join(current))
    return dedupe(entry.strip() for entry in entries)


def dedupe(entries: Iterable[str]) -> list[str]:
    """Drop empty entries and exact duplicates, keeping the first occurrence's position."""
    seen: set[str] = set()
    kept: list[str] = []
    for entry in entries:
        if entry and entry not in seen:
            seen.add(entry)
            kept.append(entry)
    return kept


def render_entries(entries: Sequence[str]) -> str:
    """The file text for a list of entries (empty string for no entries)."""
    return JOINER.join(entries) + "\n" if entries else ""


def usage_chars(entries: Sequence[str]) -> int:
    """Characters the entries occupy, separators included (what the limit counts)."""
    return len(JOINER.join(entries))


def _canonical(text: str) -> str:
    """The text with what a rewrite may change freely taken out: line endings, trailing spaces, and
    blank lines at the edges of each entry (a blank line before a `§` is formatting, not content)."""
    segments: list[list[str]] = [[]]
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.strip() == SEPARATOR:
            segments.append([])
        else:
            segments[-1].append(line.rstrip())
    return JOINER.join("\n".join(segment).strip() for segment in segments).strip()


def round_trips(text: str) -> bool:
    """True when the file is exactly what rendering its parsed entries would write."""
    return _canonical(text) == _canonical(render_entries(parse_entries(text)))


def usage_line(chars: int, limit: int) -> str:
    """`"45% — 990/2200 chars"`."""
    percent = round(100 * chars / limit) if limit > 0 else 100
    return f"{percent}% — {chars}/{limit} chars"


def preview(entry: str, width: int = PREVIEW_CHARS) -> str:
    flat = " ".join(entry.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def blocked_handle(entry: str) -> str:
    """A stable handle (`blocked:1a2b3c4d`) that removes an entry shown as `[BLOCKED: …]`
    without repeating its (unsafe) text."""
    return "blocked:" + hashlib.sha256(entry.encode("utf-8")).hexdigest()[:8]


def listing(entries: Sequence[str]) -> str:
    """The current entries, numbered, for refusal messages."""
    if not entries:
        return "(no entries)"
    return "\n".join(f"  {number}. {entry}" for number, entry in enumerate(entries, 1))


def find_entry(entries: Sequence[str], old_text: str) -> int:
    """The index of the one entry `old_text` designates.

    An entry equal to `old_text` wins over substring matches; a `blocked:<hash>` handle designates
    the entry with that hash; otherwise the substring must match exactly one entry."""
    needle = old_text.strip()
    if not needle:
        raise MemoryRefused("old_text is empty: give a short unique substring of the entry to change.")
    for index, entry in enumerate(entries):
        if entry == needle:
            return index
    handle = _BLOCKED_HANDLE.match(needle)
    if handle is not None:
        for index, entry in enumerate(entries):
            if blocked_handle(entry) == needle:
                return index
    matches = [index for index, entry in enumerate(entries) if needle in entry]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise MemoryRefused(f"No entry contains {preview(needle)!r}. Current entries:\n{listing(entries)}")
    previews = "\n".join(f"  - {preview(entries[index])}" for index in matches)
    raise MemoryRefused(
        f"{preview(needle)!r} matches {len(matches)} entries; be more specific "
        f"(use a longer substring that appears in only one):\n{previews}"
    )


def check_safe(content: str, scanner: Callable[[str], ScanFinding | None] = scan_text) -> str:
    """The stripped content, or `MemoryRefused` when it is empty or fails the security scan."""
    text = content.strip()
    if not text:
        raise MemoryRefused("content is empty: nothing to save.")
    if any(line.strip() == SEPARATOR for line in text.splitlines()):
        # Written as is, it would come back as two entries on the next load.
        raise MemoryRefused(
            f"content has a line holding only {SEPARATOR}, the entry separator: save each part as its own entry."
        )
    finding = scanner(text)
    if finding is not None:
        raise _refused(finding)
    return text


def check_store(before: Sequence[str], after: Sequence[str]) -> None:
    """`MemoryRefused` when the entries of `after`, read in order as the prompt shows them, carry an
    instruction that `before` did not (one split across two entries, or closed up by a remove)."""
    finding = scan_store(before, after)
    if finding is not None:
        raise _refused(finding, " (read together with the entry next to it)")


def _refused(finding: ScanFinding, where: str = "") -> MemoryRefused:
    return MemoryRefused(
        f"refused by the security scan: {finding.describe()}{where}. Memory is injected into every future "
        "system prompt, so instructions, secrets and hidden characters are never stored."
    )


def apply_operations(
    entries: Sequence[str], operations: Sequence[Operation], limit: int, *, label: str = "memory"
) -> Applied:
    """Apply every operation in order to a copy of `entries`, or refuse them all.

    The limit is checked once, on the final state. A write that shrinks a store already over its
    limit (hand-edited past it) is allowed, so consolidation is always possible."""
    if not operations:
        raise MemoryRefused("no operation given: use action add, replace or remove.")
    current = list(entries)
    notes: list[str] = []
    added: list[str] = []
    for number, op in enumerate(operations, 1):
        where = f"operation {number} ({op.action}): " if len(operations) > 1 else ""
        try:
            if op.action == "add":
                text = check_safe(op.content)
                if text in current:
                    notes.append("already saved (exact duplicate); nothing added")
                    continue
                current.append(text)
                added.append(text)
            elif op.action == "replace":
                text = check_safe(op.content)
                index = find_entry(current, op.old_text)
                if text in current and current[index] != text:
                    # The replacement already exists elsewhere: the old entry simply goes away.
                    del current[index]
                else:
                    current[index] = text
            elif op.action == "remove":
                del current[find_entry(current, op.old_text)]
            else:  # pragma: no cover - the input model restricts actions
                raise MemoryRefused(f"unknown action {op.action!r}: use add, replace or remove.")
        except MemoryRefused as refused:
            if where:
                raise MemoryRefused(f"{where}{refused.message} Nothing was changed.") from None
            raise
    check_store(entries, current)
    before, after = usage_chars(entries), usage_chars(current)
    if after > limit and after > before:
        sizes = ", ".join(str(len(text)) for text in added) or "0"
        too_big = [text for text in added if len(text) > limit]
        if too_big:  # no consolidation can make room: the entry itself is larger than the store
            raise MemoryRefused(
                f"this entry is {len(too_big[0])} chars, more than {label}'s whole limit of {limit}: "
                "save a shorter, distilled fact (memory holds durable facts, not documents)."
            )
        raise MemoryRefused(
            f"{label} is full: {usage_line(before, limit)} used, limit {limit}; this write would make "
            f"it {after} (new entry size {sizes} chars). Consolidate first: replace or remove entries, "
            f"then retry. Current entries:\n{listing(entries)}"
        )
    return Applied(entries=current, changed=current != list(entries), notes=notes)

"""Turning a damaged session back into a usable one (docs/architecture.md invariants 1 and 2).

Line level: `scan_lines` reads a session's record lines, skipping bad lines and a torn tail, and
applies `prune` lines (format 2) to the messages before them as it meets them (`apply_prune`).
Pairing level:
`heal` is pure and idempotent: it takes any list of messages and returns one in which every tool call
is immediately followed by its result, in the calls' declared order, plus a `Repair` for every change.
`check_pairing` is the matching test oracle: it lists what is wrong with a history without fixing it.

Kept messages are returned as the *same objects* (never copies); the session loader relies on that to
keep run markers and extra records next to the messages they followed.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from arreio.engine.core.messages import Message, ToolResultPart, interrupted_result
from arreio.engine.core.nesting import json_loads

RepairKind = Literal[
    "torn_tail",
    "interrupted_result",
    "reordered",
    "orphan_result_dropped",
    "duplicate_result_dropped",
    "bad_line_skipped",
]


class Repair(BaseModel):
    """One change the loader made to a session so it could be used. `line` is the 1-based file line
    when the change concerns one (torn or bad lines); pairing repairs name the call instead."""

    kind: RepairKind
    detail: str
    line: int | None = None


MESSAGE_LINE_PREFIX = b'{"type":"message",'  # how the session writes messages; lets us skip json.loads
PRUNE = "prune"  # {"type":"prune","results":[{"at":<index>,"call_id":…,"content":<stub>}, …]}

Placed = list[tuple[int, dict[str, Any]]]  # (messages before it, record): where a non-message line sat


def scan_lines(
    body: list[bytes], tail: bytes
) -> tuple[list[Message], list[dict[str, Any]], list[dict[str, Any]], Placed, list[Repair]]:
    """Read the record lines after the header: `body` ended with a newline, `tail` (maybe empty) did
    not. Returns (messages, run markers, extra records, placement of markers/extras, repairs).
    A bad line is skipped (`bad_line_skipped`) and never costs the good lines after it; an unusable
    unterminated tail is a torn write (`torn_tail`); a whole one is kept but still reported."""
    messages: list[Message] = []
    runs: list[dict[str, Any]] = []
    extra: list[dict[str, Any]] = []
    placed: Placed = []
    repairs: list[Repair] = []
    tail_number = len(body) + 2
    entries = list(enumerate(body, start=2))
    if tail:
        entries.append((tail_number, tail))
    for number, line in entries:
        is_tail = bool(tail) and number == tail_number
        kind, value = _classify(line)
        if kind == "message":
            messages.append(value)
        elif kind == PRUNE:
            apply_prune(messages, value)
        elif kind is not None:
            (runs if kind == "run" else extra).append(value)
            placed.append((len(messages), value))
        elif is_tail:
            detail = "partial last line dropped (interrupted write)"
            repairs.append(Repair(kind="torn_tail", detail=detail, line=number))
            continue
        else:
            repairs.append(Repair(kind="bad_line_skipped", detail=_why_bad(line), line=number))
            continue
        if is_tail:
            repairs.append(Repair(kind="torn_tail", detail="last line had no newline; kept", line=number))
    return messages, runs, extra, placed, repairs


_validate_message_json = Message.__pydantic_validator__.validate_json  # skips a wrapper per line


def _classify(line: bytes) -> tuple[str | None, Any]:
    """("message", Message) | ("run" / "extra", dict) | (None, None) for a line nothing can use."""
    if line.startswith(MESSAGE_LINE_PREFIX):  # our own writer's shape: validate straight from bytes
        try:
            return "message", _validate_message_json(line)
        except ValueError:
            return None, None
    record = parse_object(line)
    if record is None:
        return None, None
    kind = record.get("type")
    if kind == "message":
        try:
            return "message", Message.model_validate(record)
        except ValidationError:
            return None, None
    if kind == "header":  # a second header is damage, not data
        return None, None
    if kind == PRUNE:
        return (PRUNE, record) if _prune_entries(record) is not None else (None, None)
    return ("run" if kind == "run" else "extra"), record


def _prune_entries(record: dict[str, Any]) -> list[tuple[int, str, str]] | None:
    """A prune line's (index, call id, stub) entries, or None when the line is not one."""
    entries = record.get("results")
    if not isinstance(entries, list):
        return None
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            return None
        at, call_id, content = entry.get("at"), entry.get("call_id"), entry.get("content")
        if not (isinstance(at, int) and isinstance(call_id, str) and isinstance(content, str)):
            return None
        out.append((at, call_id, content))
    return out


def apply_prune(messages: list[Message], record: dict[str, Any]) -> int:
    """Apply one `prune` line to the messages before it, in place: each named result's content becomes
    its stub. The result is found at its index, or (a history an older arreio rewrote) by call id,
    nearest first; one that is gone is left alone. Idempotent. Returns how many were replaced."""
    replaced = 0
    for at, call_id, content in _prune_entries(record) or []:
        index = at if 0 <= at < len(messages) and _result_id(messages[at]) == call_id else None
        if index is None:
            index = next((i for i in range(len(messages) - 1, -1, -1) if _result_id(messages[i]) == call_id), None)
        if index is None:
            continue
        message = messages[index]
        parts = [
            p.model_copy(update={"content": content}) if isinstance(p, ToolResultPart) else p for p in message.parts
        ]
        messages[index] = message.model_copy(update={"parts": parts})
        replaced += 1
    return replaced


def _result_id(message: Message) -> str | None:
    part = message.tool_result_part if message.role == "tool" else None
    return part.call_id if part is not None else None


def parse_object(line: bytes) -> dict[str, Any] | None:
    """The line as a JSON object, or None (invalid JSON, bad UTF-8, or not an object)."""
    try:
        value = json_loads(line)  # bounded: a line nested 50,000 deep is a bad line, not a RecursionError
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _why_bad(line: bytes) -> str:
    if not line.strip():
        return "blank line skipped"
    record = parse_object(line)
    if record is None:
        return "line is not valid JSON; skipped"
    return f"unusable {record.get('type')!r} line skipped"


def _split_multi_result(message: Message) -> list[Message]:
    """A tool message holding several results becomes one message per result (pairing wants one)."""
    results = [p for p in message.parts if isinstance(p, ToolResultPart)]
    if len(results) <= 1:
        return [message]
    others = [p for p in message.parts if not isinstance(p, ToolResultPart)]
    first = Message(role="tool", parts=[results[0], *others], model=message.model)
    return [first, *(Message(role="tool", parts=[r], model=message.model) for r in results[1:])]


def awaiting_approval(messages: list[Message], extra: list[dict[str, Any]]) -> set[str]:
    """Calls a paused run left waiting on a person: the unanswered calls of the last assistant
    message (followed only by its results) when one of them has an approval record (`pending`,
    or decided but not yet run). They stay open so the resumed run executes them."""
    status = {
        r["call_id"]: r.get("status")
        for r in extra
        if r.get("type") == "approval" and isinstance(r.get("call_id"), str)
    }
    for r in extra:  # an approved call that began is no longer waiting: at most once, even after a crash
        if r.get("type") == "call_started" and r.get("call_id") in status:
            status[r["call_id"]] = "started"
    if not status:
        return set()
    answered: set[str] = set()
    for message in reversed(messages):
        if message.role == "tool":
            part = message.tool_result_part
            if part is not None:
                answered.add(part.call_id)
            continue
        if message.role != "assistant":
            return set()
        waiting = [c.id for c in message.tool_calls if c.id not in answered]
        if any(status.get(c) in ("pending", "approved", "denied") for c in waiting):
            return {c for c in waiting if status.get(c) != "started"}
        return set()
    return set()


def heal(messages: list[Message], keep_open: Collection[str] = ()) -> tuple[list[Message], list[Repair]]:
    """Return a history that satisfies pairing, and the repairs that made it so.

    `keep_open` names calls that are waiting, not broken (a run paused for approval): they get no
    `interrupted` result. Everything else is healed as usual.

    Each result is claimed by an open call *before it* with the same id (the nearest assistant
    message's first such call, should ids repeat), so a result that drifted later, e.g. past a user
    message, is pulled back to its call. Results
    with no such call are orphans and dropped; a second result for an answered call is dropped; a
    tool message without a result part is dropped; a call left without a result gets a synthetic
    `interrupted` one. Runs in O(n).
    """
    if not check_pairing(messages):
        return list(messages), []  # the usual case, and a cheap check: nothing to move
    repairs: list[Repair] = []
    flat: list[Message] = []
    for index, message in enumerate(messages):
        if message.role == "tool":
            pieces = _split_multi_result(message)
            if len(pieces) > 1:
                repairs.append(
                    Repair(kind="reordered", detail=f"message {index}: split a tool message of {len(pieces)} results")
                )
            flat.extend(pieces)
        else:
            flat.append(message)

    pending: dict[str, list[tuple[int, int]]] = {}  # call id -> open calls (assistant index, position)
    answered: set[str] = set()
    claimed: dict[int, list[tuple[int, Message] | None]] = {}  # assistant index -> per call (origin, result)
    for index, message in enumerate(flat):
        if message.role == "assistant":
            calls = message.tool_calls
            if calls:
                claimed[index] = [None] * len(calls)
                for position, call in enumerate(calls):
                    pending.setdefault(call.id, []).append((index, position))
        elif message.role == "tool":
            part = message.tool_result_part
            if part is None:
                repairs.append(
                    Repair(kind="orphan_result_dropped", detail=f"message {index}: tool message without a result part")
                )
                continue
            waiting = pending.get(part.call_id)
            if waiting:
                # Nearest assistant message wins (ids reused across turns), first open call within it.
                first = len(waiting) - 1
                while first > 0 and waiting[first - 1][0] == waiting[-1][0]:
                    first -= 1
                owner, position = waiting.pop(first)
                claimed[owner][position] = (index, message)
                answered.add(part.call_id)
            elif part.call_id in answered:
                repairs.append(
                    Repair(kind="duplicate_result_dropped", detail=f"second result for call {part.call_id} dropped")
                )
            else:
                repairs.append(
                    Repair(kind="orphan_result_dropped", detail=f"result for unknown call {part.call_id} dropped")
                )

    # A result counts as moved only if its place among the *surviving* messages changed, so dropping
    # a duplicate or adding an interrupted result does not also report its neighbours as reordered.
    kept = {id(slot[1]) for slots in claimed.values() for slot in slots if slot is not None}
    rank: list[int] = []
    survivors = 0
    for message in flat:
        rank.append(survivors)
        survivors += message.role != "tool" or id(message) in kept

    healed: list[Message] = []
    emitted = 0  # surviving (not synthesized) messages emitted so far
    for index, message in enumerate(flat):
        if message.role == "tool":
            continue  # every kept result is re-emitted right after its call below
        healed.append(message)
        emitted += 1
        slots = claimed.get(index)
        if slots is None:
            continue
        for call, slot in zip(message.tool_calls, slots, strict=True):
            if slot is None:
                if call.id in keep_open:
                    continue
                healed.append(interrupted_result(call))
                repairs.append(
                    Repair(kind="interrupted_result", detail=f"call {call.id} ({call.name}) had no result; interrupted")
                )
                continue
            origin, result = slot
            if rank[origin] != emitted:
                repairs.append(Repair(kind="reordered", detail=f"result for call {call.id} moved next to its call"))
            healed.append(result)
            emitted += 1
    return healed, repairs


def remap_placed(placed: Placed, old: list[Message], new: list[Message]) -> Placed:
    """Move records that followed `old[:after]` to just after the last surviving message of that
    prefix in `new` (matched by identity), never between a call and its results. O(n + records)."""
    if not placed:
        return placed
    where = {id(message): index for index, message in enumerate(new)}
    reach = [0]  # reach[k]: position in `new` just after the survivors of old[:k]
    for message in old:
        index = where.get(id(message))
        reach.append(max(reach[-1], index + 1 if index is not None else 0))
    moved = []
    for after, record in placed:
        position = reach[min(after, len(old))]
        while position < len(new) and new[position].role == "tool":
            position += 1
        moved.append((position, record))
    return moved


def check_pairing(messages: list[Message]) -> list[str]:
    """Every pairing violation in `messages`, as readable lines; empty means the history is whole."""
    violations: list[str] = []
    index, count = 0, len(messages)
    while index < count:
        message = messages[index]
        if message.role == "tool":
            violations.append(f"message {index}: tool result does not follow a call")
            index += 1
            continue
        index += 1
        if message.role != "assistant":
            continue
        for call in message.tool_calls:
            if index >= count or messages[index].role != "tool":
                violations.append(f"message {index}: call {call.id} is not followed by its result")
                continue
            results = [p for p in messages[index].parts if isinstance(p, ToolResultPart)]
            if len(results) != 1:
                violations.append(f"message {index}: tool message holds {len(results)} results, not 1")
            elif results[0].call_id != call.id:
                violations.append(f"message {index}: result for {results[0].call_id} where call {call.id} expected")
            index += 1
    return violations

"""The compaction summary: its structure, its text form in the history, and reading it back.

In the session it is an ordinary `user` message (every provider can send it) whose first line is a
marker, so the harness recognises it after a resume:

    [arreio:context-summary #2 · replaces 57 messages · 21 turns · 40 tool calls]
    ## Current task (the user's latest instruction, verbatim)
    ...
    ## Goal
    ...
    ## Earlier instructions
    - ...
    ## Done
    - ...

The instructions in it — the current task, the session's first goal, the ones between — are the
harness's record of what the user said (`instructions_of`), never the summariser's retelling: after a
compaction the newest instruction is still in the request, word for word, marked as the task at hand.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ValidationError

from arreio.engine.core.messages import Message
from arreio.engine.core.nesting import json_loads

SUMMARY_MARKER = "[arreio:context-summary"
_HEADER = re.compile(r"^\[arreio:context-summary #(\d+) · replaces (\d+) messages · (\d+) turns · (\d+) tool calls\]")
SECTION_ITEMS = 40  # newest items kept per list, so summaries of summaries stay bounded
ITEM_CHARS = 400
GOAL_CHARS = 6_000


class Summary(BaseModel):
    """What the agent needs to carry on: the structured state of the work. `current_task` is the
    user's newest instruction when the compaction folded it away (empty when it is still verbatim
    after the summary); `instructions` are the ones between the first goal and it."""

    goal: str = ""
    current_task: str = ""
    instructions: list[str] = []
    constraints: list[str] = []
    done: list[str] = []
    in_progress: list[str] = []
    blocked: list[str] = []
    decisions: list[str] = []
    files_touched: list[str] = []
    next_steps: list[str] = []
    notes: list[str] = []  # what a summariser said was done, in its own words: kept, but not as a record


class SummaryMeta(BaseModel):
    """Counts of what all compactions so far replaced (cumulative)."""

    number: int = 0
    messages: int = 0
    turns: int = 0
    tool_calls: int = 0


_SECTIONS = [
    ("instructions", "Earlier instructions"),
    ("constraints", "Constraints"),
    ("done", "Progress: done"),
    ("in_progress", "Progress: in progress"),
    ("blocked", "Progress: blocked"),
    ("decisions", "Decisions"),
    ("files_touched", "Files touched"),
    ("next_steps", "Next steps"),
    ("notes", "Notes (the summariser's words, not checked)"),
]


def is_summary(message: Message) -> bool:
    return message.role == "user" and message.text.startswith(SUMMARY_MARKER)


HARNESS_NOTE = "[arreio]"  # a user message the harness wrote (a continuation note), not the user


def is_instruction(message: Message) -> bool:
    """A user message holding the user's words: not a compaction summary, not a harness note, not
    only tool results or images."""
    return (
        message.role == "user"
        and bool(message.text.strip())
        and not is_summary(message)
        and not message.text.startswith(HARNESS_NOTE)
    )


def instructions_of(messages: list[Message]) -> list[str]:
    """The user's instructions among `messages`, oldest first."""
    return [m.text.strip() for m in messages if is_instruction(m)]


def render_summary(summary: Summary, meta: SummaryMeta) -> Message:
    lines = [
        (
            f"{SUMMARY_MARKER} #{meta.number} · replaces {meta.messages} messages · {meta.turns} turns · "
            f"{meta.tool_calls} tool calls]"
        ),
        (
            "The earlier part of this conversation was compacted into this summary; the messages after it are "
            "verbatim. Its done, blocked and files-touched lists are arreio's records of the real calls and outputs."
        ),
    ]
    task = summary.current_task.strip()
    if task:
        lines += ["", CURRENT_TASK, _capped(task)]
    same = task and task == summary.goal.strip()
    lines += ["", "## Goal", SAME_AS_TASK if same else (_capped(summary.goal) or "(not stated)")]
    for key, title in _SECTIONS:
        items = getattr(summary, key)
        if items:
            lines += ["", f"## {title}"] + [f"- {_one_line(item)}" for item in items]
    return Message.user("\n".join(lines) + "\n")


CURRENT_TASK = "## Current task (the user's latest instruction, verbatim)"
SAME_AS_TASK = "(the current task above)"


def _capped(text: str) -> str:
    text = text.strip()
    return text if len(text) <= GOAL_CHARS else text[:GOAL_CHARS] + f"\n[… {len(text) - GOAL_CHARS} more characters]"


def _one_line(item: str) -> str:
    flat = " ".join(str(item).split())
    return flat[:ITEM_CHARS] + ("…" if len(flat) > ITEM_CHARS else "")


def parse_summary_message(message: Message) -> tuple[Summary, SummaryMeta] | None:
    """Read a rendered summary back (sections → lists); None when it is not one."""
    if not is_summary(message):
        return None
    text = message.text
    head = _HEADER.match(text)
    meta = (
        SummaryMeta(**dict(zip(("number", "messages", "turns", "tool_calls"), map(int, head.groups()))))
        if head
        else SummaryMeta()
    )
    titles = {title: key for key, title in _SECTIONS}
    data: dict[str, object] = {}
    current: str | None = None
    blocks: dict[str, list[str]] = {"goal": [], "current_task": []}
    for line in text.splitlines()[1:]:
        if line.startswith("## "):
            current = "goal" if line[3:] == "Goal" else "current_task" if line == CURRENT_TASK else titles.get(line[3:])
            continue
        if current in blocks:
            blocks[current].append(line)
        elif current and line.startswith("- "):
            data.setdefault(current, []).append(line[2:])  # type: ignore[union-attr]
    for key, lines in blocks.items():
        data[key] = "\n".join(lines).strip()
    if data["goal"] == SAME_AS_TASK:
        data["goal"] = data["current_task"]
    return Summary.model_validate(data), meta


def merge(previous: Summary | None, ours: Summary) -> Summary:
    """Carry an earlier summary forward: its lists first, then ours, without repeats, newest kept."""
    if previous is None:
        return _bounded(ours)
    merged = {"goal": previous.goal or ours.goal, "current_task": ours.current_task}
    for key, _ in _SECTIONS:
        seen = list(dict.fromkeys([*getattr(previous, key), *getattr(ours, key)]))
        merged[key] = seen
    # What was "in progress" or "next" before is superseded by the newer summary's view.
    for key in ("in_progress", "next_steps"):
        if getattr(ours, key):
            merged[key] = getattr(ours, key)
    return _bounded(Summary.model_validate(merged))


def _bounded(summary: Summary) -> Summary:
    return summary.model_copy(update={key: getattr(summary, key)[-SECTION_ITEMS:] for key, _ in _SECTIONS})


def parse_summary(text: str) -> Summary | None:
    """The model's JSON summary (bare or in a ``` fence); None when it is not one."""
    body = text.strip()
    fence = re.search(r"```(?:json)?\s*(\{.*\})\s*```", body, re.DOTALL)
    if fence:
        body = fence.group(1)
    elif "{" in body:
        body = body[body.index("{") : body.rindex("}") + 1]
    try:
        data = json_loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    for key, _ in _SECTIONS:  # tolerate a string where a list was asked for
        if isinstance(data.get(key), str):
            data[key] = [data[key]]
        elif isinstance(data.get(key), list):
            data[key] = [str(item) if not isinstance(item, str) else item for item in data[key]]
    try:
        summary = Summary.model_validate({k: v for k, v in data.items() if k in Summary.model_fields})
    except ValidationError:
        return None
    return summary if any(getattr(summary, k) for k in Summary.model_fields) else None


def summarised_turns(messages: list[Message]) -> int:
    """Assistant turns that earlier compactions folded into the summary at the top, if any."""
    for message in messages:
        if is_summary(message):
            parsed = parse_summary_message(message)
            return parsed[1].turns if parsed else 0
    return 0

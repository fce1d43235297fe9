"""The compaction summary: its structure, its text form in the history, and reading it back.

In the session it is an ordinary `user` message (every provider can send it) whose first line is a
marker, so the harness recognises it after a resume:

    [arreio:context-summary #2 · replaces 57 messages · 21 turns · 40 tool calls]
    ## Goal
    ...
    ## Done
    - ...
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ValidationError

from arreio.engine.messages import Message

SUMMARY_MARKER = "[arreio:context-summary"
_HEADER = re.compile(
    r"^\[arreio:context-summary #(\d+) · replaces (\d+) messages · (\d+) turns · (\d+) tool calls\]"
)
SECTION_ITEMS = 40  # newest items kept per list, so summaries of summaries stay bounded
ITEM_CHARS = 400
GOAL_CHARS = 6_000


class Summary(BaseModel):
    """What the agent needs to carry on: the structured state of the work."""

    goal: str = ""
    constraints: list[str] = []
    done: list[str] = []
    in_progress: list[str] = []
    blocked: list[str] = []
    decisions: list[str] = []
    files_touched: list[str] = []
    next_steps: list[str] = []


class SummaryMeta(BaseModel):
    """Counts of what all compactions so far replaced (cumulative)."""

    number: int = 0
    messages: int = 0
    turns: int = 0
    tool_calls: int = 0


_SECTIONS = [
    ("constraints", "Constraints"),
    ("done", "Progress: done"),
    ("in_progress", "Progress: in progress"),
    ("blocked", "Progress: blocked"),
    ("decisions", "Decisions"),
    ("files_touched", "Files touched"),
    ("next_steps", "Next steps"),
]


def is_summary(message: Message) -> bool:
    return message.role == "user" and message.text.startswith(SUMMARY_MARKER)


def render_summary(summary: Summary, meta: SummaryMeta) -> Message:
    lines = [
        (f"{SUMMARY_MARKER} #{meta.number} · replaces {meta.messages} messages · {meta.turns} turns · "
         f"{meta.tool_calls} tool calls]"),
        ("The earlier part of this conversation was compacted into this summary; the messages after it are "
         "verbatim. What it lists as done was done; its records were taken from the real outputs."),
        "",
        "## Goal",
        summary.goal[:GOAL_CHARS].strip() or "(not stated)",
    ]
    for key, title in _SECTIONS:
        items = getattr(summary, key)
        if items:
            lines += ["", f"## {title}"] + [f"- {_one_line(item)}" for item in items]
    return Message.user("\n".join(lines) + "\n")


def _one_line(item: str) -> str:
    flat = " ".join(str(item).split())
    return flat[:ITEM_CHARS] + ("…" if len(flat) > ITEM_CHARS else "")


def parse_summary_message(message: Message) -> tuple[Summary, SummaryMeta] | None:
    """Read a rendered summary back (sections → lists); None when it is not one."""
    if not is_summary(message):
        return None
    text = message.text
    head = _HEADER.match(text)
    meta = SummaryMeta(**dict(zip(("number", "messages", "turns", "tool_calls"), map(int, head.groups())))) if head else SummaryMeta()
    titles = {title: key for key, title in _SECTIONS}
    data: dict[str, object] = {}
    current, goal_lines = None, []
    for line in text.splitlines()[1:]:
        if line.startswith("## "):
            current = "goal" if line[3:] == "Goal" else titles.get(line[3:])
            continue
        if current == "goal":
            goal_lines.append(line)
        elif current and line.startswith("- "):
            data.setdefault(current, []).append(line[2:])  # type: ignore[union-attr]
    data["goal"] = "\n".join(goal_lines).strip()
    return Summary.model_validate(data), meta


def merge(previous: Summary | None, ours: Summary) -> Summary:
    """Carry an earlier summary forward: its lists first, then ours, without repeats, newest kept."""
    if previous is None:
        return _bounded(ours)
    merged = {"goal": previous.goal or ours.goal}
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
        data = json.loads(body)
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

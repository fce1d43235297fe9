"""Proactive compaction (docs/architecture.md section 3 and invariant 1).

After a tool round, when the estimated context passes the watermark, the older conversation is
replaced by one structured summary (a `user` message starting with `SUMMARY_MARKER`) and a tail of
recent messages kept verbatim. The decisions are pure — `should_compact`, `find_cut_point`,
`prepare_compaction`, `summariser_backoff`, `fallback_summary` — and the one impure step,
`summarise`, asks a model and falls back to the deterministic summary when that fails, so a failed
summary never drops turns. The summary's text format lives in `engine/core/summary.py`.

A cut lands only where a new assistant turn begins: every call/result group stays whole, no result
is orphaned, and the summary (a user message) is followed by an assistant message, as providers expect.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from arreio.engine.context.pruning import call_label, digest
from arreio.engine.context.summary_wait import LOCAL_PACE, LocalPace, summary_wait
from arreio.engine.core.messages import Message, ToolResultPart
from arreio.engine.core.model_io import ModelRequest, SystemBlock, Usage
from arreio.engine.core.summary import (
    SECTION_ITEMS,
    SUMMARY_MARKER,
    Summary,
    SummaryMeta,
    instructions_of,
    is_instruction,
    is_summary,
    merge,
    parse_summary,
    parse_summary_message,
    render_summary,
)
from arreio.engine.core.tokens import estimate_request
from arreio.engine.providers.oneshot import ask

__all__ = [
    "SUMMARY_MARKER",
    "CompactionPlan",
    "Summary",
    "SummaryMeta",
    "fallback_summary",
    "find_cut_point",
    "is_summary",
    "prepare_compaction",
    "render_summary",
    "should_compact",
    "summarise",
    "summariser_backoff",
]

SUMMARISER_BLOCK = "arreio-summariser"  # the system block name that marks a summarisation request
SUMMARISER_PROMPT = """You compress an agent's working conversation so it can continue without it.
Reply with ONE JSON object and nothing else, with these keys:
goal (string), constraints, done, in_progress, blocked, decisions, files_touched, next_steps (lists of
short strings). Keep every fact the agent will still need: exact paths, names, numbers, commands,
errors and what was decided. Merge the earlier summary, if one is given, into yours. No tool calls."""
RESULT_CHARS_IN_TRANSCRIPT = 1_500

Weigh = Callable[[Message], float]


def should_compact(tokens: float, window: int, watermark: float | None) -> bool:
    """True once the context reaches `watermark` × window. `watermark` 0/None turns compaction off."""
    if not watermark or window <= 0:
        return False
    return tokens >= watermark * window


def _clean_cuts(messages: list[Message]) -> list[int]:
    """Indices where a cut keeps every group whole: a new assistant turn, after the last summary."""
    start = 0
    for i, message in enumerate(messages):
        if is_summary(message):
            start = i + 1
    # A cut must leave at least one assistant turn before it: summarising only a goal gains nothing.
    turns = [i for i in range(start, len(messages)) if messages[i].role == "assistant"]
    return turns[1:]


def find_cut_point(messages: list[Message], keep_tail_tokens: float, weigh: Weigh) -> int | None:
    """Where the kept tail starts: the latest clean cut whose tail still holds `keep_tail_tokens`, or
    the earliest clean cut when even that tail is smaller (keep as much as possible). None when there
    is nothing to summarise (no clean cut with anything new before it)."""
    cuts = _clean_cuts(messages)
    if not cuts:
        return None
    tail = 0.0
    position = len(messages)
    for cut in reversed(cuts):
        tail += sum(weigh(m) for m in messages[cut:position])
        position = cut
        if tail >= keep_tail_tokens:
            return cut
    return cuts[0]


@dataclass
class CompactionPlan:
    """What to summarise and what to keep. `head` is replaced by one summary; `tail` is kept verbatim."""

    cut: int
    head: list[Message]
    tail: list[Message]
    previous: Summary | None
    meta: SummaryMeta
    # call id -> (the call's label, what it showed when it ran): the work log's record. A result
    # pruned since is only its stub in `head`, and the record is cheaper than digesting it again.
    records: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # The user's words, from the messages (never from a summariser): the session's first goal, the
    # newest instruction when the cut folds it away ("" when the tail still holds one), and those between.
    goal: str = ""
    current_task: str = ""
    instructions: list[str] = field(default_factory=list)

    def with_instructions(self, summary: Summary) -> Summary:
        """`summary` carrying the plan's record of the user's instructions, whatever it said of them."""
        return summary.model_copy(
            update={
                "goal": self.goal or summary.goal,
                "current_task": self.current_task,
                "instructions": self.instructions[-SECTION_ITEMS:],
            }
        )


def prepare_compaction(messages: list[Message], keep_tail_tokens: float, weigh: Weigh) -> CompactionPlan | None:
    """Split the history for a compaction, or None when no clean cut exists."""
    cut = find_cut_point(messages, keep_tail_tokens, weigh)
    if cut is None:
        return None
    head, tail = messages[:cut], messages[cut:]
    previous, meta = None, SummaryMeta()
    for message in head:
        if is_summary(message):
            parsed = parse_summary_message(message)
            if parsed:
                previous, meta = parsed
    fresh = [m for m in head if not is_summary(m)]
    turns = [m for m in fresh if m.role == "assistant"]  # the only messages that hold calls
    meta = SummaryMeta(
        number=meta.number + 1,
        messages=meta.messages + len(fresh),
        turns=meta.turns + len(turns),
        tool_calls=meta.tool_calls + sum(len(m.tool_calls) for m in turns),
    )
    plan = CompactionPlan(cut, head, tail, previous, meta)
    plan.goal, plan.current_task, plan.instructions = _instructions(previous, fresh, tail)
    return plan


def _instructions(previous: Summary | None, fresh: list[Message], tail: list[Message]) -> tuple[str, str, list[str]]:
    """(goal, current task, earlier instructions) after a cut: the newest instruction stays in the
    request verbatim — in the tail, or as the summary's current task."""
    said = instructions_of(fresh)
    history = [
        *(previous.instructions if previous else []),
        *([previous.current_task] if previous and previous.current_task else []),
        *said,
    ]
    goal = previous.goal if previous and previous.goal else (said[0] if said else "")
    if not (previous and previous.goal) and said:
        history.remove(said[0])  # the first instruction is the goal
    if any(is_instruction(m) for m in tail):
        return goal, "", history
    if history:
        return goal, history[-1], history[:-1]
    return goal, goal, []


def summariser_backoff(failures: int) -> int:
    """After `failures` consecutive failed model summaries, how many compactions use the fallback
    directly before the model is asked again: 0, 1, 2, 4, 8 … capped at 16."""
    return 0 if failures <= 0 else min(16, 2 ** (failures - 1))


# -- the deterministic summary ------------------------------------------------------------------
_CONSTRAINT_WORDS = ("must", "never", "don't", "do not", "only", "should", "without", "keep")
_WRITE_TOOLS = {"write_file": "wrote", "edit_file": "edited"}


def _goal(head: list[Message], previous: Summary | None) -> str:
    if previous is not None and previous.goal:
        return previous.goal
    first = next((m.text for m in head if m.role == "user" and not is_summary(m)), "")
    return first.strip()


def fallback_summary(plan: CompactionPlan) -> Summary:
    """A summary built from the messages alone: what was called on what, what failed, what the
    agent said. Used when the model summary fails or is backing off; never loses a turn's record."""
    fresh = [m for m in plan.head if not is_summary(m)]
    results: dict[str, ToolResultPart] = {}
    for m in fresh:
        part = m.tool_result_part if m.role == "tool" else None
        if part is not None:
            results[part.call_id] = part
    goal = _goal(plan.head, plan.previous)
    constraints = [
        ln.strip("-* ").strip() for ln in goal.splitlines() if any(w in ln.lower() for w in _CONSTRAINT_WORDS)
    ]
    done, blocked, files, decisions = [], [], [], []
    for m in fresh:
        if m.role != "assistant":
            continue  # only an assistant turn says something of its own or calls a tool
        text = m.text.strip()
        if text:
            decisions.append(text.splitlines()[0][:200])
        for call in m.tool_calls:
            result = results.get(call.id)
            known = plan.records.get(call.id)
            label, record = known or (
                call_label(call),
                digest(call, result.content, result.is_error) if result else "no result",
            )
            line = f"{label} → {record}"
            (blocked if result is not None and result.is_error else done).append(line)
            path = call.arguments.get("path")
            if isinstance(path, str) and result is not None and not result.is_error:
                files.append(f"{path} ({_WRITE_TOOLS.get(call.name, 'read' if 'read' in call.name else call.name)})")
    last_text = next((m.text.strip() for m in reversed(fresh) if m.role == "assistant" and m.text.strip()), "")
    ours = Summary(
        goal=goal,
        constraints=constraints,
        done=done,
        in_progress=[last_text[:300]] if last_text else [],
        blocked=blocked[-10:],
        decisions=decisions,
        files_touched=list(dict.fromkeys(files)),
        next_steps=["continue from the verbatim messages after this summary"],
    )
    return plan.with_instructions(merge(plan.previous, ours))


# -- the model summary --------------------------------------------------------------------------
def transcript(plan: CompactionPlan) -> str:
    """The head as plain text for the summariser (plain text: no tool pairing for it to break)."""
    out = [f"GOAL:\n{_goal(plan.head, plan.previous)}\n"]
    if plan.current_task and plan.current_task != plan.goal:
        out.append(f"CURRENT TASK (the user's latest instruction):\n{plan.current_task}\n")
    if plan.previous is not None:
        out.append("EARLIER SUMMARY:\n" + render_summary(plan.previous, plan.meta).text.split("\n", 2)[-1] + "\n")
    for m in plan.head:
        if is_summary(m):
            continue
        for part in m.parts:
            if part.type == "text" and part.text.strip():
                out.append(f"{m.role.upper()}: {part.text.strip()}")
            elif part.type == "tool_call":
                out.append(f"CALL {part.name} {json.dumps(part.arguments, ensure_ascii=False)[:400]}")
            elif part.type == "tool_result":
                body = part.content[:RESULT_CHARS_IN_TRANSCRIPT]
                cut = f" [... {len(part.content) - len(body)} more chars]" if len(part.content) > len(body) else ""
                out.append(f"RESULT {part.name}{' (error)' if part.is_error else ''}: {body}{cut}")
    return "\n".join(out)


def summary_request(plan: CompactionPlan, model: str, max_tokens: int = 4096) -> ModelRequest:
    return ModelRequest(
        model=model,
        system=[SystemBlock(name=SUMMARISER_BLOCK, text=SUMMARISER_PROMPT)],
        messages=[Message.user(transcript(plan) + "\n\nReply with the JSON summary now.")],
        max_tokens=max_tokens,
    )


async def summarise(
    provider,
    model: str,
    plan: CompactionPlan,
    *,
    use_model: bool = True,
    timeout_s: float | None = None,
    local: bool = False,
    pace: LocalPace = LOCAL_PACE,
) -> tuple[Summary, str, Usage]:
    """(summary, source, usage). `source` is "model", or "fallback: <why>" when the deterministic
    summary was used. Never raises for a provider failure; cancellation still propagates. The wait is
    `summary_wait`'s: `timeout_s` when set, else 180 s, else (`local`: a server on this machine or
    network) one that fits a slow CPU and lasts while the stream produces."""
    if not use_model:
        return fallback_summary(plan), "fallback: backing off after failed summaries", Usage()
    request = summary_request(plan, model)
    wait = summary_wait(timeout_s, local, estimate_request(request), pace)
    text, usage, error, streamed = "", Usage(), "", False
    try:
        async with asyncio.timeout(wait.first_s) as deadline:
            loop = asyncio.get_running_loop()

            def produced() -> None:
                nonlocal streamed
                streamed = True
                if wait.idle_s is not None:  # the transcript is read: from now on, silence is what ends the wait
                    deadline.reschedule(loop.time() + wait.idle_s)

            answer = await ask(provider, request, progress=produced)
        text, usage, error = answer.text, answer.usage, answer.error.message if answer.error else ""
    except TimeoutError:
        error = (
            f"the stream stopped for {wait.idle_s:.0f}s"
            if streamed and wait.idle_s is not None
            else f"no answer within {wait.first_s:.0f}s"
        )
    except Exception as exc:  # noqa: BLE001 - a broken summariser must not cost the run its history
        error = f"{type(exc).__name__}: {exc}"
    summary = None if error else parse_summary(text)
    if summary is None:
        return fallback_summary(plan), f"fallback: {error or 'the reply was not a JSON summary'}", usage
    # The harness writes the facts it owns — what was called, what failed, which files were touched —
    # from its records; the model's summary gives the prose (what is in progress, decisions, next
    # steps), and what it says was done is kept as its notes (a small model listed files no call touched).
    facts = fallback_summary(plan)
    prose = merge(plan.previous, summary).model_copy(
        update={
            "done": facts.done,
            "blocked": facts.blocked,
            "files_touched": facts.files_touched,
            "constraints": list(dict.fromkeys([*facts.constraints, *summary.constraints])),
            "notes": list(
                dict.fromkeys(
                    [
                        *(plan.previous.notes if plan.previous else []),
                        *summary.done,
                        *summary.blocked,
                        *summary.files_touched,
                    ]
                )
            )[-40:],
        }
    )
    return plan.with_instructions(prose), "model", usage

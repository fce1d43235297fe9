"""The run summary the proposer reviews: built from the run's events and its session."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from arreio.engine.core.messages import Message
from arreio.engine.core.summary import instructions_of
from arreio.engine.core.wording import counted


@dataclass
class ToolUse:
    name: str
    arguments: dict[str, Any]
    is_error: bool
    preview: str


@dataclass
class RunSummary:
    goal: str = ""
    verdict: str = ""
    final_text: str = ""
    steps: int = 0
    tools: list[ToolUse] = field(default_factory=list)
    gates: list[tuple[str, bool, str]] = field(default_factory=list)
    # Where a lesson's words may come from: the user's own instructions, and — untrusted — everything
    # tools returned (files read, pages fetched, commands' output) and the agent wrote (contents, names).
    user_said: list[str] = field(default_factory=list)
    untrusted: list[str] = field(default_factory=list)

    @property
    def commands_ok(self) -> list[str]:
        """Shell commands that exited 0, in order."""
        return [
            str(t.arguments.get("command", "")).strip()
            for t in self.tools
            if t.name == "shell" and not t.is_error and str(t.arguments.get("command", "")).strip()
        ]

    @property
    def empty(self) -> bool:
        return not (self.goal.strip() or self.final_text.strip() or self.tools)

    @property
    def files_written(self) -> list[str]:
        paths = [
            str(t.arguments.get("path")) for t in self.tools if t.name in ("write_file", "edit_file") and not t.is_error
        ]
        return list(dict.fromkeys(paths))

    @property
    def errors(self) -> list[ToolUse]:
        return [t for t in self.tools if t.is_error]

    def render(self) -> str:
        """A compact text form for a model proposer."""
        lines = [f"Goal: {self.goal.strip()}", f"Verdict: {self.verdict} after {counted(self.steps, 'step')}"]
        for t in self.tools[:60]:
            args = ", ".join(f"{k}={str(v)[:60]!r}" for k, v in t.arguments.items() if k != "content")
            lines.append(f"- {t.name}({args}) → {'ERROR ' if t.is_error else ''}{t.preview[:120]}")
        for name, passed, detail in self.gates:
            lines.append(f"Gate {name}: {'passed' if passed else 'failed'} — {detail}")
        lines.append(f"Final answer: {self.final_text.strip()[:1500]}")
        return "\n".join(lines)


def summarize(events: Iterable[Any], messages: list[Message], goal: str) -> RunSummary:
    """Events give outcomes; the session gives the calls' arguments (events carry them too)."""
    summary = RunSummary(goal=goal)
    starts: dict[str, Any] = {}
    for event in events:
        kind = getattr(event, "type", None)
        if kind == "tool_start":
            starts[event.call_id] = event
        elif kind == "tool_end":
            start = starts.get(event.call_id)
            summary.tools.append(
                ToolUse(event.name, dict(start.arguments) if start else {}, event.is_error, event.preview)
            )
        elif kind == "gate_result":
            summary.gates.append((event.gate, event.passed, event.detail))
        elif kind == "unit_end":
            summary.final_text = event.final_text or summary.final_text
            summary.verdict = event.verdict
            summary.steps += event.steps
    if not summary.final_text:
        summary.final_text = next((m.text for m in reversed(messages) if m.role == "assistant" and m.text), "")
    summary.user_said = instructions_of(messages)
    for m in messages:
        if m.role == "tool" and m.tool_result_part is not None:
            summary.untrusted.append(m.tool_result_part.content)
        elif m.role == "assistant":
            for call in m.tool_calls:
                summary.untrusted += [
                    str(v) for k, v in call.arguments.items() if k in ("content", "new", "path", "command")
                ]
    return summary

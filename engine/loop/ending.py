"""What a reply without tool calls means (docs/architecture.md invariant 11: no success for a cut-off reply, an
unparsed tool call, or an empty answer).

A weak model ends a step in ways that are not an answer: it writes the tool call as text, answers
nothing, or runs into the token cap mid-sentence. `UnitEnding` decides, per unit:

- tool calls written as text (`text_calls.py`) for tools that exist, with arguments that validate,
  are run as calls, and a `warning` says so;
- a reply that is only call-shaped text that cannot be run, or is empty, gets one short correction
  (a harness note the model answers), then the unit fails with the reason;
- a text reply cut at the token cap is not an answer: the model is asked once to continue where it
  stopped (the parts are joined), and the unit fails if it is cut again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arreio.engine.core import events as ev
from arreio.engine.core.messages import Message, ToolCallPart
from arreio.engine.core.summary import summarised_turns
from arreio.engine.loop.outcome import Outcome
from arreio.engine.loop.reply import Reply
from arreio.engine.loop.text_calls import read_text_calls
from arreio.engine.tools.registry import ToolRegistry

NOTE = "[arreio] "
CORRECT_SHAPED = (
    NOTE + "Your last reply was a tool call written as text, which was not run: {why}. To use a tool, "
    "call it through the tool-calling interface; to finish, answer in plain words."
)
CORRECT_EMPTY = NOTE + "Your last reply was empty. Call a tool, or give your final answer in plain words."
CONTINUE_CUT = (
    NOTE + "Your last reply was cut off at the token limit. Continue exactly where it stopped, "
    "without repeating what you already wrote."
)


@dataclass
class Ending:
    """The decision on one reply: `calls` to run, a `note` to send before asking again, an `outcome`
    that ends the unit, or a final `text` (the answer, parts of a cut reply joined)."""

    calls: list[ToolCallPart] = field(default_factory=list)
    note: str | None = None
    outcome: Outcome | None = None
    text: str | None = None
    events: list[ev.Event] = field(default_factory=list)


@dataclass
class UnitEnding:
    """One unit's judge of replies without calls (module docstring)."""

    corrected: bool = False
    cut: list[str] = field(default_factory=list)  # text of replies cut at the token cap, in order

    def text_calls(
        self, reply: Reply, tools: ToolRegistry, history: list[Message]
    ) -> tuple[list[ToolCallPart], list[ev.Event]]:
        """Calls written in the reply's text, to run as if called; their ids are unique in the session
        (numbered by the assistant turns so far, those a compaction summarised included)."""
        found = read_text_calls(reply.text, set(tools.names()), lambda name, args: _invalid(tools, name, args))
        if not found.calls:
            return [], []
        turn = summarised_turns(history) + sum(1 for m in history if m.role == "assistant")
        calls = [
            ToolCallPart(id=f"text_{turn}_{j}", name=name, arguments=arguments)
            for j, (name, arguments) in enumerate(found.calls)
        ]
        names = ", ".join(call.name for call in calls)
        said = ev.Warning_(
            message=f"the model wrote its tool call as text; arreio recognised it and runs {names}",
            code="text_tool_call",
        )
        return calls, [said]

    def judge(self, reply: Reply, tools: ToolRegistry) -> Ending:
        """A reply without calls (after `text_calls` found none)."""
        text = reply.text
        if reply.done.stop_reason == "refusal":  # the model declined (or could not do) the goal: no success
            said = " ".join(text.split())[:300] or "the model declined the goal"
            return Ending(outcome=Outcome.of("failed", f"the model did not do the goal: {said}", text))
        if reply.done.stop_reason == "max_tokens":
            self.cut.append(text)
            if len(self.cut) > 1:
                return Ending(
                    outcome=Outcome.of(
                        "failed",
                        "the model's answer was cut off at the token limit "
                        "(max_tokens) twice; it is not taken as an answer",
                        "".join(self.cut),
                    )
                )
            warned = ev.Warning_(
                message="the reply was cut off at the token limit (max_tokens); asking the model to continue",
                code="reply_cut",
            )
            return Ending(note=CONTINUE_CUT, events=[warned])
        whole = "".join([*self.cut, text])
        found = read_text_calls(text, set(tools.names()), lambda name, args: _invalid(tools, name, args))
        if found.shaped:
            why = "; ".join(found.problems) or "it could not be read as a call"
            return self._correct(
                CORRECT_SHAPED.format(why=why),
                f"the model answered with a tool call written as text that could not be run ({why}), twice",
                whole,
            )
        if not whole.strip():
            return self._correct(CORRECT_EMPTY, "the model gave an empty answer, twice", whole)
        return Ending(text=whole)

    def _correct(self, note: str, failure: str, text: str) -> Ending:
        if self.corrected:
            return Ending(outcome=Outcome.of("failed", failure, text))
        self.corrected = True
        return Ending(note=note, events=[ev.Warning_(message=note.removeprefix(NOTE), code="not_an_answer")])


def _invalid(tools: ToolRegistry, name: str, arguments: dict[str, Any]) -> str | None:
    tool = tools.get(name)
    if tool is None:
        return "no such tool"
    if tool.input_model is None:
        return None
    try:
        tool.input_model.model_validate(arguments)
    except Exception as exc:  # noqa: BLE001 - pydantic's ValidationError, or a validator's own error
        first = str(exc).splitlines()
        return "its arguments do not fit: " + (first[1].strip() if len(first) > 1 else first[0])[:160]
    return None

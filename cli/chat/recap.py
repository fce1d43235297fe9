"""What a resumed chat shows of its conversation (`--continue`, `--resume`, `/resume`): the last few
exchanges, compactly — each message as the person typed it, the tool calls made for it, the answer it
got — after a line saying how much came before (and whether a summary stands for it). Only the last
exchange was shown: the person came back to one message out of a whole conversation.

    … 4 earlier exchanges (and a summary of the conversation before them)
    > what is in notes.md?
      · 1 tool call
      It lists three groceries: eggs, milk and bread.
    > add butter
      (no answer: that turn ended without one)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arreio.cli.inert import shown as escape
from arreio.engine.core.wording import counted

SHOWN = 3  # exchanges shown in full
EARLIER_CHARS = 160  # an earlier exchange's answer, on one line
LAST_CHARS = 400  # the last exchange's answer: what the person most likely came back for


@dataclass
class Exchange:
    """One message the person sent, and what came of it."""

    asked: str
    calls: int = 0
    answer: str = ""  # the last text the assistant wrote for it ("" none)


@dataclass
class Recap:
    exchanges: list[Exchange] = field(default_factory=list)  # the last SHOWN, oldest first
    earlier: int = 0  # exchanges before those
    summarised: bool = False  # a summary stands for the conversation before the exchanges counted
    answer: str = ""  # with no exchange since a summary: the newest answer there is


def recap(messages: list[Any], shown: int = SHOWN) -> Recap:
    """The last `shown` exchanges of `messages` (a session's history). A user message with no text
    (the images after a tool result) or a compaction summary opens no exchange."""
    from arreio.cli.chat.mentions import as_typed
    from arreio.engine.core.summary import is_summary

    exchanges: list[Exchange] = []
    found = Recap()
    for message in messages:
        if message.role == "user" and is_summary(message):
            found.summarised, exchanges = True, []
        elif message.role == "user" and message.text.strip():
            exchanges.append(Exchange(asked=as_typed(message.text)))
        elif message.role == "assistant":
            if exchanges:
                exchanges[-1].calls += len(message.tool_calls)
                exchanges[-1].answer = message.text or exchanges[-1].answer
            elif message.text:
                found.answer = message.text
    found.exchanges, found.earlier = exchanges[-shown:], max(0, len(exchanges) - shown)
    return found


def short(text: str, limit: int = EARLIER_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def lines(found: Recap) -> list[str]:
    """The recap as the chat says it (rich markup; everything quoted is escaped)."""
    said: list[str] = []
    if found.earlier:
        summary = " (and a summary of the conversation before them)" if found.summarised else ""
        said.append(f"[dim]… {counted(found.earlier, 'earlier exchange')}{summary}[/dim]")
    elif found.summarised:
        said.append(f"[dim]… the conversation {'before' if found.exchanges else 'so far'} is summarised[/dim]")
    if not found.exchanges:  # nothing asked since the last summary: the newest answer is all there is
        if found.answer:
            said.append(f"[dim]last answer: {escape(short(found.answer, LAST_CHARS))}[/dim]")
        return said
    for number, exchange in enumerate(found.exchanges, 1):
        said.append(f"[bold]>[/bold] {escape(short(exchange.asked))}")
        if exchange.calls:
            said.append(f"[dim]  · {counted(exchange.calls, 'tool call')}[/dim]")
        limit = LAST_CHARS if number == len(found.exchanges) else EARLIER_CHARS
        answer = (
            escape(short(exchange.answer, limit)) if exchange.answer else "(no answer: that turn ended without one)"
        )
        said.append(f"[dim]  {answer}[/dim]")
    return said

"""One chat message, driven through the one conveyor: `run_pipeline(state.options(message), deps)`,
each event rendered as it comes, a spinner on a terminal while nothing else moves, SIGTERM, Ctrl-C
and Esc (typeahead.py) turned into a clean cancel of this turn only.

A cancelled turn ends the way a cancelled `arreio run` does: the pipeline's own `finally` closes the
interrupted calls with `interrupted` results (pairing stays whole), writes the report and the
session's end marker, and releases the lock — so the next message resumes a valid session."""

from __future__ import annotations

import contextlib
import signal
import sys
from dataclasses import dataclass
from typing import Any

from arreio.cli.chat.echo import unechoed
from arreio.cli.chat.typeahead import TypeAhead


@dataclass
class TurnResult:
    """How a message's run ended: its `done` event (None: cancelled before one came), whether it was
    cancelled from the keyboard, the ids it ran under."""

    done: Any = None
    cancelled: bool = False
    session_id: str | None = None
    run_id: str | None = None
    typed: str = ""  # keys typed during the turn, for the next prompt (typeahead.py)


def run_turn(state: Any, message: str, deps: Any, render: Any, *, spinner: Any = None) -> TurnResult:
    """Run `message` as one run of the chat's session and render it; never raises for a cancel."""
    import asyncio

    from arreio.cli.spinner import waiting_for
    from arreio.engine.run.pipeline import after_cancel, run_pipeline

    result = TurnResult()
    keys = TypeAhead(sys.stdin)

    async def go() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        # The chat's own SIGTERM handler (loop.py: SIGTERM leaves the chat) comes back after the turn:
        # asyncio's remove_signal_handler resets it to the default, which killed the chat at the next
        # prompt with the terminal left in raw mode.
        previous = signal.getsignal(signal.SIGTERM)
        if task is not None:
            loop.add_signal_handler(signal.SIGTERM, _terminate, task)
        try:
            with keys.watching(task.cancel if task is not None else lambda: None):
                await drive()
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    async def drive() -> None:
        # Closed here, whatever ends the loop (a view that cannot write): left to the loop's shutdown,
        # the generator was closed twice at once and asyncio printed a traceback.
        async with contextlib.aclosing(run_pipeline(state.options(message), deps)) as events:
            await show(events)

    async def show(events: Any) -> None:
        async for event in events:
            if spinner is not None:
                spinner.clear()
            if event.type != "done" and after_cancel(event):
                continue  # a cancelled turn's calls it cut short: the turn shows only its end
            render(event)
            if event.type == "run_start" and event.agent is None:
                result.session_id, result.run_id = event.session_id, event.run_id
                state.session_id = event.session_id  # from here on, every message resumes it
            elif event.type == "done" and event.agent is None:
                result.done = event
                continue
            if spinner is not None:
                label = waiting_for(event, answer_shown=True)
                if label is None and getattr(render, "writing", False):
                    label = "writing the answer"
                spinner.wait(label if render.at_line_start or label == "writing the answer" else None)

    try:
        with unechoed(sys.stdin):  # nothing the terminal echoes lands in the live preview (echo.py)
            asyncio.run(go())
    except (KeyboardInterrupt, asyncio.CancelledError) as stop:
        # A Ctrl-C that lands after the run ended (while the loop shuts down) cancelled nothing.
        result.cancelled = result.done is None or result.done.verdict == "cancelled"
        if isinstance(stop, KeyboardInterrupt):  # Ctrl-C drops the keys typed ahead, as a terminal does
            keys.drop()
    finally:
        result.typed = keys.text
        if spinner is not None:
            spinner.clear()
        if hasattr(render, "flush"):  # a cancel mid-answer: the preview ends, the cursor shows again
            render.flush()
    if result.done is not None and result.run_id is not None:
        state.record(result.done, result.run_id)
    return result


def _terminate(task: Any) -> None:
    """SIGTERM during a turn: the turn is cancelled as Ctrl-C cancels it, and the chat then leaves."""
    from arreio.cli.interrupts import note_terminated

    note_terminated()
    task.cancel()

"""Approvals inline in a chat: `PipelineDeps.ask_approval` for every turn of the chat.

    Run it? [y]es [n]o [a]lways in this chat [e]xplain:

`y` runs the call, `n` (or Enter, or end of input) refuses it, anything else asks again, `a` runs it
and allows this tool with these very arguments for the rest of the chat (a call with other arguments
is asked about afresh), `e` shows the full arguments and asks again. At a terminal one key answers,
without Enter (the rest of its word and an Enter typed straight after are taken with it: "yes⏎" is
one answer, not a "yes" and then an "es" sent as the next message); elsewhere a line does. Ctrl-C (or
SIGTERM) at the question refuses the call and stops the turn (the approvals hook turns the
KeyboardInterrupt into a cancel; the call is never run)."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from arreio.cli.chat.echo import echoed, read_key, tty_fd
from arreio.cli.inert import call_text, flat, inert
from arreio.cli.interrupts import question

QUESTION = "Run it? [y]es [n]o [a]lways in this chat [e]xplain: "


def _key(event: Any) -> tuple[str, str]:
    from arreio.engine.walls.audit import digest

    return event.name, digest(event.arguments)


class ChatApprovals:
    """Asks at the terminal; remembers what `a` allowed for the rest of the chat."""

    def __init__(self, stdin: TextIO | None = None, stderr: TextIO | None = None, *, show_call: bool = False) -> None:
        """`show_call`: the turn's own '⏸ … needs approval: $ cmd' line goes where the person does not look
        (stdout to a file or a pipe), so the question says what would run itself."""
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr
        self.show_call = show_call
        self.always: set[tuple[str, str]] = set()

    def allowed(self, event: Any) -> bool:
        """`a` was answered for this tool with these arguments earlier in the chat."""
        return _key(event) in self.always

    def __call__(self, event: Any) -> bool:
        if self.allowed(event):
            return True
        # A blocking read is never reached by the loop's handlers (they cancel at the next await): Ctrl-C
        # and SIGTERM raise KeyboardInterrupt right here instead (cli/interrupts.py).
        with question(), echoed(self.stdin):  # the turn turned the echo off (echo.py); the answer is typed here
            try:
                return self._ask(event)
            except KeyboardInterrupt:
                self.stderr.write("\n")  # what follows (the cancelled turn) starts a line of its own
                raise

    def _ask(self, event: Any) -> bool:
        if self.show_call:  # all of the call, its lines kept (one flattened line hid where a command ended)
            why = f" ({event.reason})" if event.reason else ""
            header = flat(f"{event.name} needs approval{why}:")
            self.stderr.write(f"⏸ {header} {call_text(event.summary or event.name)}\n")
        fd = tty_fd(self.stdin)
        while True:
            self.stderr.write(QUESTION)
            self.stderr.flush()
            if fd is not None:
                answer = read_key(fd)
                self.stderr.write(("" if answer in ("", "\x04") else answer) + "\n")  # the answer, echoed as typed
                if answer == "\x04":  # Ctrl-D: end of input, nobody said yes
                    return False
                answer = answer.lower()
            else:
                line = self.stdin.readline()
                if not line:  # end of input: nobody said yes
                    self.stderr.write("\n")
                    return False
                answer = line.strip().lower()
            if answer in ("e", "explain"):
                self.stderr.write(inert(json.dumps(event.arguments, ensure_ascii=False, indent=2)) + "\n")
                continue
            if answer in ("a", "always"):
                self.always.add(_key(event))
                return True
            if answer in ("y", "yes"):
                return True
            if answer in ("", "n", "no"):
                return False
            # A typo or a sentence ("yes please", "ok") was a silent refusal: the person meant an answer.
            self.stderr.write("answer y, n, a or e (Enter alone is no)\n")

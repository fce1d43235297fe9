"""A chat that is not at a terminal: the messages come on stdin, are run in turn on one session, and
print as `arreio run` prints (the live view's plain lines), so a chat is scriptable and testable
without a pty:

    printf 'List the notes\\nNow count them\\n/cost\\n' | arreio chat --offline

Every line is a message; when the input has a blank line anywhere, every block between blank lines
is one instead (so a message can span lines). A `/command` runs as it would at the prompt. With no
person to ask, a sensitive call pauses its turn (exit 3, as `arreio run` does; `--yes` approves) and
the next message goes on from there. The exit code is the last failing message's (2 for an unknown
`/command`), 0 when all succeeded; a cancel (Ctrl-C, SIGTERM) stops the whole script with 130."""

from __future__ import annotations

import re
import sys
from typing import Any, TextIO

from arreio.cli.inert import inert

_BLANK = re.compile(r"\n[ \t]*\n")
_PREFIX = {1: "error", 3: "paused", 4: "stopped", 5: "error"}


def split_messages(text: str) -> list[str]:
    """The messages in piped input: blocks between blank lines if there is a blank line, else lines."""
    body = text.replace("\r\n", "\n").strip("\n")
    if not body.strip():
        return []
    if _BLANK.search(body):
        parts = re.split(r"\n(?:[ \t]*\n)+", body)
    else:
        parts = body.split("\n")
    return [part.strip("\n") for part in parts if part.strip()]


def _tell(done: Any) -> None:
    """A message whose run did not succeed says why on stderr, one line, as `arreio run` does."""
    prefix = _PREFIX.get(done.exit_code)
    if prefix and done.message:
        message = " ".join(inert(done.message).split()).removeprefix(f"{prefix}: ")
        print(f"arreio: {prefix}: {message}", file=sys.stderr, flush=True)


def piped(state: Any, stdin: TextIO | None) -> int:
    from arreio.cli.chat import slash
    from arreio.cli.chat.loop import Chat
    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.regular_file import Limit, size_text

    # Bounded as a plan is: `arreio chat < /dev/zero` is refused, not read until the memory runs out.
    data = stdin.read(Limit.PLAN + 1) if stdin is not None else ""
    if len(data) > Limit.PLAN:
        raise UsageError(
            f"arreio chat: the messages on stdin are over the {size_text(Limit.PLAN)} limit; "
            "pipe fewer, or put long material in a file a message names"
        )
    messages = split_messages(data)
    if not messages:
        raise UsageError(
            "arreio chat: stdin is not a terminal and sent no message (pipe the messages in, "
            "one a line, or run it at a terminal)"
        )
    chat = Chat(state, interactive=False)
    code = 0
    for message in messages:
        if slash.is_command(message):
            outcome = slash.dispatch(chat, message)
            if outcome == slash.LEAVE:
                break
            if outcome == slash.REFUSED:  # a script's typo must not pass for success (exit 0)
                code = 2
                print(
                    f"arreio: error: {inert(' '.join(message.split()))}: refused (said above); "
                    "/help lists the commands",
                    file=sys.stderr,
                    flush=True,
                )
            continue
        result = chat.send(message.removeprefix("/") if message.startswith("//") else message)
        if result is None:
            code = chat.failed_code
            continue
        if result.cancelled:
            code = 130
            break
        if result.done is not None and result.done.exit_code:
            code = result.done.exit_code
            _tell(result.done)
    chat.goodbye(sys.stderr)
    return code

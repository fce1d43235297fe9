"""`arreio chat` in a real pseudo-terminal (tests/terminal.py), read the way a person reads it: each
`next` waits for a pattern *after* what was already seen, so a prompt shown earlier never satisfies a
wait for the next one."""

from __future__ import annotations

import re
import time
from pathlib import Path

from tests.conftest import ARREIO
from tests.terminal import Terminal

PROMPT = "›"


class ChatTerminal(Terminal):
    def __init__(
        self, cwd: Path, env: dict[str, str], *args: str, stdout: int | None = None, through: str | None = None
    ) -> None:
        """`through`: a shell command the chat's stdout is piped into, itself writing to the terminal
        (`through="tee chat.log"` is `arreio chat | tee chat.log`)."""
        # prompt_toolkit asks the terminal where its cursor is (CPR); this pty never answers
        env = {**env, "PROMPT_TOOLKIT_NO_CPR": "1"}
        argv = [*ARREIO, "chat", *args]
        if through is not None:
            argv = ["sh", "-c", f'"$@" | {through}', "sh", *argv]
        super().__init__(argv, cwd=cwd, env=env, stdout=stdout)
        self.seen = 0

    def next(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """Wait until `pattern` shows after everything matched so far; AssertionError with the screen if not."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            found = regex.search(self._shown(), self.seen)
            if found:
                self.seen = found.end()
                return found
            left = deadline - time.monotonic()
            if left <= 0 or (not self._read(min(left, 0.2)) and self.proc.poll() is not None and not self._read(0.1)):
                raise AssertionError(f"{pattern!r} never showed after what was seen; the terminal shows:\n{self.plain}")

    def _shown(self) -> str:
        """The output as plain text (tests/terminal.py `plain`), less a trailing escape sequence that
        is still arriving: offsets into it only ever grow, so `seen` stays valid."""
        text = re.sub(r"\x1b(\[[0-9;?]*)?$|\x1b\][^\x07]*$", "", self.output)
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", text).replace("\r\n", "\n")

    def prompt(self, timeout: float = 60.0) -> None:
        """Wait for the next prompt."""
        self.next(PROMPT, timeout)

    def send(self, text: str) -> None:
        """Type a message at the prompt (it must be showing) and press Enter."""
        self.type(text + "\r")

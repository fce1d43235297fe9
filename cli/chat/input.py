"""The chat's prompt, on prompt_toolkit (the line editor Python REPLs use — IPython, ptpython,
aws-cli, litecli: history search, completion menus, bracketed paste and multi-line editing that
readline does not give without a fight). Imported only when an interactive chat starts.

- history persists in `<state>/chat_history` (per project, like the sessions it leads to), redacted;
- Enter sends; Esc-Enter, or Enter after a trailing `\\`, starts a new line; a paste is taken whole
  (bracketed paste: its newlines never send);
- Ctrl-R searches the history backwards (the emacs binding); Ctrl-Z suspends the chat (`fg` brings it back);
- Tab completes `/commands` at the start of the message and `@path` mentions anywhere;
- a message sent with a big paste in it is echoed with the paste collapsed (`[pasted 40 lines]`,
  cli/chat/paste.py): `ChatPrompt.read` gives the echo to print where prompt_toolkit erased its own."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import is_searching
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys

from arreio.cli.chat.paste import collapsed, normalised
from arreio.engine.core.paths import make_state_dir
from arreio.engine.core.ports import process_env

PROMPT = "› "
CONTINUATION = "· "
HISTORY_FILE = "chat_history"
_MAX_PATHS = 200


class RedactedHistory(FileHistory):
    """The history file, with secrets redacted before they reach the disk (no file arreio writes holds
    a secret, whatever the path); the running chat's own up-arrow still has the line as typed."""

    def store_string(self, string: str) -> None:
        from arreio.engine.walls.redact import Redactor  # after a message is sent, not at start-up

        super().store_string(Redactor.from_env(process_env()).text(string))


class ChatCompleter(Completer):
    """`/` commands at the start of the message; `@path` (files and folders under the chat's folder)."""

    def __init__(self, commands: Sequence[str], cwd: Path) -> None:
        self.commands = list(commands)
        self.cwd = cwd

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            for name in self.commands:
                if name.startswith(before[1:]):
                    yield Completion("/" + name, start_position=-len(before))
            return
        quoted = before.rfind('@"')
        if quoted != -1 and (quoted == 0 or before[quoted - 1].isspace()) and '"' not in before[quoted + 2 :]:
            yield from self._paths(before[quoted + 2 :], len(before) - quoted)  # `@"my no` (a name with spaces)
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            yield from self._paths(word[1:], len(word))

    def _paths(self, typed: str, replaced: int) -> Iterable[Completion]:
        """Entries under the folder `typed` names; each completion replaces the `replaced` characters
        before the cursor (the mention so far). A name with a space is completed quoted, `@"a b.md"`,
        the form cli/chat/mentions.py reads as one name."""
        folder, _, stem = typed.rpartition("/")
        base = (self.cwd / folder) if folder else self.cwd
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            if not entry.name.startswith(stem) or (entry.name.startswith(".") and not stem.startswith(".")):
                continue
            name = f"{folder}/{entry.name}" if folder else entry.name
            is_dir = entry.is_dir(follow_symlinks=True)
            name += "/" if is_dir else ""
            mention = f'@"{name}' + ("" if is_dir else '"') if any(c.isspace() for c in name) else "@" + name
            yield Completion(mention, start_position=-replaced, display=entry.name + ("/" if is_dir else ""))
            shown += 1
            if shown >= _MAX_PATHS:
                return


class ChatPrompt(PromptSession):
    """The prompt, remembering what was pasted into the message being typed."""

    pastes: list[str]

    def read(self, typed: str = "") -> tuple[str, str | None]:
        """The message typed, and (when a big paste in it was collapsed) the echo to print in place of
        prompt_toolkit's own, which it erased. `typed`: keys typed while the last turn ran, as the
        terminal sent them (typeahead.py), replayed first, as if typed here."""
        self.pastes.clear()
        self.app.erase_when_done = False
        text = self.prompt(pre_run=(lambda: _replay(self.app, typed)) if typed else None)
        return text, (collapsed(text, self.pastes) if self.app.erase_when_done else None)


def _replay(app: Any, typed: str) -> None:
    from prompt_toolkit.input.vt100_parser import Vt100Parser

    presses: list[Any] = []
    parser = Vt100Parser(presses.append)
    parser.feed(typed)
    parser.flush()
    app.key_processor.feed_multiple(presses)
    app.key_processor.process_keys()


def _bindings(pastes: list[str]) -> KeyBindings:
    keys = KeyBindings()
    editing = ~is_searching  # during Ctrl-R the search's own keys apply (Enter accepts the match)

    @keys.add("enter", filter=editing)
    def _enter(event) -> None:
        buffer = event.current_buffer
        if buffer.complete_state is not None and buffer.complete_state.current_completion is not None:
            buffer.apply_completion(buffer.complete_state.current_completion)
            return
        before = buffer.document.text_before_cursor
        if before.endswith("\\") and not before.endswith("\\\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
            return
        # A big paste: the echo left on the screen is the chat's, with the paste collapsed (paste.py).
        event.app.erase_when_done = collapsed(buffer.text, pastes) is not None
        buffer.validate_and_handle()

    @keys.add(Keys.BracketedPaste)
    def _paste(event) -> None:
        data = normalised(event.data)
        pastes.append(data)
        event.current_buffer.insert_text(data)

    @keys.add("c-c", filter=editing)
    def _interrupt(event) -> None:
        buffer = event.current_buffer
        if buffer.text:  # Ctrl-C with a message typed clears it; on an empty prompt it is a step towards leaving
            buffer.reset()
            return
        event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    @keys.add("escape", "enter", filter=editing)
    def _newline(event) -> None:
        event.current_buffer.insert_text("\n")

    return keys


def _continuation(width: int, line: int, wraps: int) -> str:
    """The margin of a line after the first: `· ` where the message goes on to a new line; blank where a
    long line only wraps (the same mark made a wrapped line look like a new one)."""
    return (" " if wraps else CONTINUATION).rjust(width)


def prompt_session(state_dir: Path, commands: Sequence[str], cwd: Path, **io: Any) -> ChatPrompt:
    """The chat's prompt session; the history file's folder is made if it is missing. `io` may give
    prompt_toolkit's `input` and `output` (tests feed keys through a pipe)."""
    try:
        make_state_dir(state_dir)
        history = RedactedHistory(str(state_dir / HISTORY_FILE))
    except OSError:  # a read-only state folder: the chat works, without a saved history
        from prompt_toolkit.history import InMemoryHistory

        history = InMemoryHistory()
    pastes: list[str] = []
    session = ChatPrompt(
        message=PROMPT,
        multiline=True,
        key_bindings=_bindings(pastes),
        history=history,
        completer=ChatCompleter(commands, cwd),
        complete_while_typing=False,
        prompt_continuation=_continuation,
        enable_history_search=False,
        search_ignore_case=True,
        enable_suspend=True,  # Ctrl-Z suspends, as in a shell (it typed a literal ^Z into the message)
        **io,
    )
    session.pastes = pastes
    return session

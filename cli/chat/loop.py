"""The chat: read a message, run it as one run of the session, show it, ask for the next.

`Chat` is what both modes share (a person at a terminal: `interactive`; a script on stdin:
cli/chat/piped.py): sending a message (mentions attached, a pending note for the model first) and the
slash commands' view of the chat. At a terminal:

- Ctrl-C while the agent works stops that turn at once (the pipeline heals the session and writes the
  report on its way out) and the prompt comes back with a note; the next message goes on;
- Ctrl-C with a message typed clears it; on an empty prompt twice in a row, or Ctrl-D, leaves,
  printing the session id and how to continue. A Ctrl-C within BURST_S of a cancelled turn's prompt
  is the rest of the burst that stopped it (people press it several times): it does not count towards
  leaving (four presses 0.15 s apart stopped a tool and then left the chat);
- with stdout piped (`arreio chat | tee chat.log`) the chat is still a chat: the prompt and all the
  chat says itself (banner, notes, slash commands, goodbye) are on stderr (the terminal), the turns go
  to the pipe as plain lines; when the
  pipe's reader leaves (`| head -1`) the chat ends after that turn, saying so. (It was taken for a
  scripted chat: no prompt, the typed lines read up to Ctrl-D, the answers gone into the pipe.)

The engine is imported behind the first prompt (a background thread warms it up), so the prompt
is ready as soon as prompt_toolkit is."""

from __future__ import annotations

import signal
import sys
import threading
import time
from typing import Any

from arreio.cli.inert import shown as escape
from arreio.cli.interrupts import forget_terminated, terminated
from arreio.cli.render import console_for, isatty
from arreio.engine.core.ports import process_env
from arreio.engine.core.wording import counted

BURST_S = 0.7  # Ctrl-C this soon after a cancelled turn's prompt came back was meant for the turn


class Chat:
    def __init__(self, state: Any, *, interactive: bool) -> None:
        self.state = state
        self.interactive = interactive
        self.console = console_for(sys.stdout)  # the turns
        # What the chat itself says (banner, notes, slash commands' output) goes where the person looks:
        # stderr when stdout is a file or a pipe (`> chat.log`: /help answered into the file).
        screen = interactive and not isatty(sys.stdout) and isatty(sys.stderr)
        self.screen = console_for(sys.stderr) if screen else self.console
        self.approvals: Any = None
        if interactive and not state.yes:
            from arreio.cli.chat.approval import ChatApprovals

            # The question goes where the person looks: stderr, unless that is redirected (`2>log`).
            self.approvals = ChatApprovals(
                stderr=sys.stderr if isatty(sys.stderr) else sys.stdout, show_call=not isatty(sys.stdout)
            )
        self.note = ""  # said to the model before the next message (e.g. after /undo)
        self.failed_code = 0  # the exit code of the last message that could not even start
        self.cancelled = False  # the last turn was cancelled (the prompt that follows guards against a burst)
        self.typed = ""  # keys typed while the last turn ran, replayed at the next prompt (typeahead.py)

    def say(self, markup: str) -> None:
        self.screen.print(markup, soft_wrap=True, highlight=False)

    def flush_output(self) -> None:
        self.console.file.flush()
        self.screen.file.flush()

    def to_screen(self) -> Any:
        """Inside, what prints to stdout (an arreio command run in-process) goes where `say` does."""
        import contextlib

        return contextlib.nullcontext() if self.screen is self.console else contextlib.redirect_stdout(self.screen.file)

    def deps(self) -> Any:
        """A turn's dependencies, as `arreio run` wires them, with the chat's approvals."""
        from arreio.cli.deps import pipeline_deps

        deps = pipeline_deps()
        if self.approvals is not None:
            deps.ask_approval = self.approvals
        return deps

    def switch(self, session_id: str | None) -> None:
        self.state.session_id = session_id
        self.state.turns = []
        self.note = ""

    def show_history(self) -> None:
        """Where a continued chat stands: the session, and its last few exchanges (cli/chat/recap.py)."""
        from arreio.cli.chat.recap import lines, recap
        from arreio.engine.session.file import Session

        sid = self.state.session_id
        session, _ = Session.open(self.state.store().path_for(sid), repair=False)
        session.close()
        self.say(
            f"[dim]session {sid} · {counted(len(session.messages), 'message')} · {escape(session.header.title)}[/dim]"
        )
        for line in lines(recap(session.messages)):
            self.say(line)
        if session.runs and session.runs[-1].get("verdict") == "paused":
            self._say_waiting(session)

    def _say_waiting(self, session: Any) -> None:
        """A session left paused at an approval (a piped chat, `arreio run`): what waits, and what to do.
        Nothing said it: the next message silently dropped the call ('not run: … a new instruction came')."""
        from arreio.cli.inert import call_text
        from arreio.engine.governance.approvals import describe_call

        sid = self.state.session_id
        for call in session.pending_calls():  # all of it: `arreio approve` runs exactly this
            shown = call_text(describe_call(call.name, call.arguments), markup=True)
            self.say(f"[yellow]waiting for approval:[/yellow] {shown}")
        if session.pending_calls():
            self.say(
                f"[yellow]`arreio approve {sid}` runs it (`--deny` refuses it); a message sent here goes on "
                "without it[/yellow]"
            )

    def renderer(self) -> Any:
        if self.interactive:
            from arreio.cli.chat.view import ChatRenderer

            approvals = self.approvals
            return ChatRenderer(
                self.console,
                markdown=isatty(sys.stdout),
                allowed=approvals.allowed if approvals is not None else None,
                asked_with_call=approvals is not None and approvals.show_call,
            )
        from arreio.cli.render import LiveRenderer

        return LiveRenderer(self.console)

    def send(self, message: str) -> Any:
        """One message as one run; returns its TurnResult (None: it could not start, said why)."""
        from arreio.cli.chat.mentions import expand
        from arreio.cli.chat.turn import run_turn
        from arreio.cli.spinner import Spinner
        from arreio.engine.core.errors import ArreioError

        expanded = expand(message, self.state.cwd)
        for note in expanded.notes:
            self.say(f"[yellow]{escape(note)}[/yellow]")
        if expanded.attached:
            self.say(f"[dim]attached: {escape(', '.join(expanded.attached))}[/dim]")
        text = f"{self.note}\n\n{expanded.text}" if self.note else expanded.text
        spinner = Spinner(sys.stderr) if self.interactive and isatty(sys.stderr) else None
        try:
            result = run_turn(self.state, text, self.deps(), self.renderer(), spinner=spinner)
        except ArreioError as error:  # the run could not start (bad model, locked session): one line
            self._failed(f"error: {' '.join(error.message.split())}")
            self.failed_code = error.exit_code
            return None
        except Exception as error:  # a bug: one line, and the chat (and its session) goes on
            if process_env().get("ARREIO_DEBUG"):
                raise
            self._failed(f"internal error: {type(error).__name__}: {error} (set ARREIO_DEBUG=1 for the traceback)")
            self.failed_code = 1
            return None
        finally:
            if spinner is not None:
                spinner.close()
        self.note = ""
        self.typed = result.typed
        if result.cancelled and self.interactive and not terminated():  # a SIGTERM: the chat leaves instead
            self.say("[yellow]turn cancelled — the session is intact; send a message to go on[/yellow]")
            self.cancelled = True
        return result

    def _failed(self, line: str) -> None:
        """A message that could not start: in red in the chat; a scripted chat says it on stderr as
        `arreio run` does (it went to stdout, among the answers a script reads)."""
        if self.interactive:
            self.say(f"[red]{escape(line)}[/red]")
        else:
            from arreio.cli.inert import inert

            print(f"arreio: {' '.join(inert(line).split())}", file=sys.stderr, flush=True)

    def goodbye(self, stream: Any = None) -> None:
        sid = self.state.session_id
        line = (
            f"session {sid} · continue with `arreio chat --continue` (or `arreio chat --resume {sid}`)"
            if sid
            else "no session was started"
        )
        print(line, file=stream or sys.stdout, flush=True)


def _warm_up() -> None:
    """Import the conveyor while the person types (the first message then starts at once)."""
    import contextlib

    with contextlib.suppress(Exception):  # the first message imports it again and says what is wrong
        import arreio.cli.chat.turn
        import arreio.cli.deps
        import arreio.engine.run.pipeline  # noqa: F401


def interactive(state: Any) -> int:
    """The chat at a terminal; returns the exit code (0: left by the person)."""
    from arreio.cli.chat import slash
    from arreio.cli.chat.input import prompt_session
    from arreio.engine.core.paths import state_dir

    chat = Chat(state, interactive=True)
    screen: Any = None if chat.screen is chat.console else chat.screen.file  # stdout is not the terminal
    io: dict[str, Any] = {}
    if screen is not None:
        from prompt_toolkit.output import create_output

        io["output"] = create_output(stdout=screen)
    prompt = prompt_session(state_dir(state.cwd, state.env), slash.names(), state.cwd, **io)
    where = f"session {state.session_id}" if state.session_id else "new session"
    chat.say(f"[dim]arreio chat · {where} · /help for commands · Ctrl-D leaves[/dim]")
    if state.session_id:
        chat.show_history()
    warm = threading.Timer(0.2, _warm_up)  # after the prompt is drawn: it competes for the interpreter
    warm.daemon = True
    warm.start()
    forget_terminated()
    previous = signal.signal(signal.SIGTERM, _leave_on_sigterm(prompt))
    try:
        _converse(chat, prompt)
    finally:
        signal.signal(signal.SIGTERM, previous)
    chat.goodbye(screen)
    return 130 if terminated() else 0


def _leave_on_sigterm(prompt: Any) -> Any:
    """The chat's SIGTERM handler: SIGTERM asks the process to end (systemd, `docker stop`, `kill`), so
    the chat leaves as Ctrl-D leaves — the terminal back as it was, the session named — and exits 130.
    At the prompt, prompt_toolkit is told to stop reading (raising from the handler left it with the
    terminal in raw mode); a turn's own handler cancels the turn (turn.py); anywhere else it raises."""
    from arreio.cli.interrupts import Terminated, note_terminated

    def handler(signum: int, frame: Any) -> None:
        note_terminated()
        app = prompt.app
        if app.is_running and app.loop is not None and not app.loop.is_closed():
            app.loop.call_soon_threadsafe(_stop_reading, app)
            return
        raise Terminated

    return handler


def _stop_reading(app: Any) -> None:
    from arreio.cli.interrupts import Terminated

    if app.is_running and app.future is not None and not app.future.done():
        app.exit(exception=Terminated)


def _converse(chat: Chat, prompt: Any) -> None:
    """Read and send messages until the person leaves (or a SIGTERM ends the chat)."""
    from arreio.cli.chat import slash
    from arreio.cli.chat.input import CONTINUATION, PROMPT

    interrupts = 0
    burst_end = 0.0
    while True:
        if chat.console.quiet:  # stdout's reader left (render.py silenced it): nobody reads the answers
            print("arreio: stdout was closed (its reader left); the chat ends here", file=sys.stderr, flush=True)
            break
        if chat.cancelled:  # timed from here, the prompt's drawing: a slow clean-up does not eat the window
            chat.cancelled, burst_end = False, time.monotonic() + BURST_S
        typed, chat.typed = chat.typed, ""
        try:
            text, echo = prompt.read(typed)
        except KeyboardInterrupt:
            if terminated():
                break
            if time.monotonic() < burst_end:
                continue
            interrupts += 1
            if interrupts >= 2:
                break
            chat.say("[dim](Ctrl-C again, or Ctrl-D, leaves)[/dim]")
            continue
        except EOFError:
            break
        interrupts = 0
        if echo is not None:  # a big paste: prompt_toolkit erased its echo, this one collapses the paste
            chat.say(escape(PROMPT + echo.replace("\n", "\n" + CONTINUATION)))
        if not text.strip():
            continue
        try:
            if slash.is_command(text):
                if slash.dispatch(chat, text) == slash.LEAVE:
                    break
                continue
            chat.send(text.removeprefix("/") if text.startswith("//") else text)
        except KeyboardInterrupt:  # a Ctrl-C between turns (a slash command, a note): back to the prompt
            if not terminated():
                chat.say("[yellow]interrupted[/yellow]")
        if terminated():
            break

"""Slash commands: what a chat does besides sending a message. Each takes the chat and the text after
its name; a command that leaves the chat returns `LEAVE`. An unknown name gets a did-you-mean; an
argument given to a command that takes none is refused (it was ignored: `/diff --stat` showed the
whole patch). A first word that is a path (`/etc/hosts what is this?`, what a terminal pastes for a
dropped file) is no command: the line is a message.

The inspection commands (/memory, /skills, /sessions, /diff, /undo) are the CLI's own commands,
called in-process, so the chat shows exactly what `arreio memory show` & co. show."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from arreio.cli.inert import shown as escape
from arreio.engine.core.wording import counted

LEAVE = "leave"
REFUSED = "refused"  # an unknown command, or an argument to one that takes none: a scripted chat exits 2

Handler = Callable[[Any, str], Any]
COMMANDS: dict[str, tuple[Handler, str]] = {}
TAKES_ARGUMENTS: set[str] = set()  # the others refuse any
ALIASES = {"quit": "exit", "q": "exit", "?": "help"}


def command(name: str, usage: str, *, arguments: bool = False) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        COMMANDS[name] = (handler, usage)
        if arguments:
            TAKES_ARGUMENTS.add(name)
        return handler

    return register


def is_command(text: str) -> bool:
    """`text` is a slash command (not `//…`, the escape for a message starting with `/`, and not a
    path such as `/etc/hosts …`, which is a message)."""
    if not text.startswith("/") or text.startswith("//"):
        return False
    words = text[1:].split(maxsplit=1)
    return not words or "/" not in words[0]


def names() -> list[str]:
    return list(COMMANDS)


def dispatch(chat: Any, line: str) -> Any:
    """Run the slash command on `line` (which starts with `/`)."""
    words = line[1:].split(maxsplit=1)  # any white space ends the name: `/new` then Esc-Enter and more
    name, arg = (words + ["", ""])[:2]
    name = ALIASES.get(name.lower(), name.lower())
    found = COMMANDS.get(name)
    if found is None:
        close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.5)
        hint = f"; did you mean /{close[0]}?" if close else ""
        chat.say(f"[yellow]unknown command /{escape(name)}{hint}[/yellow] (/help lists them)")
        return REFUSED
    if arg.strip() and name not in TAKES_ARGUMENTS:
        chat.say(f"[yellow]/{name} takes no argument[/yellow] (usage: {escape(found[1])})")
        return REFUSED
    return found[0](chat, arg.strip())


def _cli(chat: Any, group: Any, command: str, args: list[str], *, slash: str) -> None:
    """`arreio GROUP COMMAND ARGS` run in-process as `/slash ARGS`; its failure is one line, as at the
    shell. (Run through the group, its --help said 'Usage: arreio show [OPTIONS]', no command there is.)"""
    import typer.main

    from arreio.engine.core.errors import ArreioError

    try:
        with chat.to_screen():
            typer.main.get_command(group).commands[command].main(
                args=args, prog_name=f"/{slash}", standalone_mode=False
            )
    except ArreioError as error:
        chat.say(f"[red]{escape(' '.join(error.message.split()))}[/red]")
    except SystemExit:
        pass
    except Exception as error:  # click's usage errors, matched by shape
        if not hasattr(error, "format_message"):
            raise
        chat.say(f"[red]{escape(error.format_message())}[/red]")


@command("help", "/help — this list")
def _help(chat: Any, arg: str) -> None:
    for _, usage in COMMANDS.values():
        chat.say(f"  {escape(usage)}")
    chat.say(
        "[dim]Enter sends · Esc-Enter or a trailing \\ adds a line · Ctrl-R searches the history · "
        "@path attaches a file · Esc or Ctrl-C stops a turn · Ctrl-D leaves[/dim]"
    )


@command("model", "/model [NAME] — show the model, or use NAME from the next message on", arguments=True)
def _model(chat: Any, arg: str) -> None:
    state = chat.state
    if not arg:
        chat.say(f"model: {escape(state.session_model())}")
        return
    if len(arg.split()) > 1:  # `/model gpt-4o please` was taken whole, and every later message failed on it
        chat.say("[yellow]give one model name: /model NAME[/yellow]")
        return
    from arreio.engine.core.errors import ArreioError
    from arreio.engine.providers import registry

    try:
        registry.check_model(arg)
    except ArreioError as error:
        chat.say(f"[red]{escape(error.message)}[/red]")
        return
    script = state.played_script()
    if script is not None and not registry.is_offline(arg):
        # The script was dropped: the next message went to the named model (and failed without its key).
        away = (
            f"; `arreio chat --continue --model {arg}` goes on with this session on {arg}"
            if state.session_id
            else f"; `arreio chat --model {arg}` talks to {arg}"
        )
        chat.say(
            f"[yellow]this chat plays the script {escape(script.name)}: its replies come from the script, "
            f"which only the offline model plays; the model stays {escape(state.session_model())}"
            f"{escape(away)}[/yellow]"
        )
        return
    state.model, state.script = arg, script  # an offline model plays on with the script
    chat.say(
        f"model: {escape(arg)} from the next message on"
        + (f" [dim](still playing the script {escape(script.name)})[/dim]" if script is not None else "")
    )


@command("compact", "/compact — summarise the conversation so far now (the last turn stays verbatim)")
def _compact(chat: Any, arg: str) -> None:
    import asyncio

    from arreio.cli.chat.compact import compact_now
    from arreio.engine.core.errors import ArreioError

    if not chat.state.session_id:
        chat.say("nothing to compact yet")
        return
    try:
        done = asyncio.run(compact_now(chat.state, chat.deps().provider_factory))
    except ArreioError as error:
        chat.say(f"[red]{escape(error.message)}[/red]")
        return
    if done is None:
        chat.say("nothing to compact: the conversation is one turn long")
        return
    if done.done.kept:
        chat.say(
            f"not compacted: a summary of the {counted(done.done.messages_removed, 'message')} before the last "
            f"turn is no shorter than they are ({done.tokens_before:,} tokens now, {done.tokens_after:,} "
            "with it); the conversation stays as it is"
        )
        return
    how = "" if done.done.source == "model" else f" [dim]({escape(done.done.source)})[/dim]"
    chat.say(
        f"context compacted: {done.tokens_before:,} → {done.tokens_after:,} tokens "
        f"({counted(done.done.messages_removed, 'message')} summarised){how}"
    )


@command("cost", "/cost — tokens, cost and cache share of this chat")
def _cost(chat: Any, arg: str) -> None:
    from arreio.cli.chat.stats import cost_lines

    for line in cost_lines(chat.state):
        chat.say(escape(line))


@command("diff", "/diff — what the last turn changed in the files")
def _diff(chat: Any, arg: str) -> None:
    from arreio.cli.commands import checkpoints

    run = chat.state.last_run()
    if run is None:
        chat.say("nothing to show: no message has been sent in this session yet")
        return
    if _changed_nothing(chat):
        chat.say("nothing to show: the last turn changed no files")
        return
    chat.flush_output()
    _call(chat, lambda: checkpoints.diff(run=run, step=None, stat=False, json_output=False))


def _changed_nothing(chat: Any) -> bool:
    """This chat's last turn is known to have changed no file (its `done` said so): /diff and /undo
    say that, not "no checkpoints … (it changed no files, or its checkpoints were pruned)"."""
    turns = chat.state.turns
    return bool(turns) and turns[-1].changed_files is False


@command("undo", "/undo [--force] — take back what the last turn changed (it is checkpointed too)", arguments=True)
def _undo(chat: Any, arg: str) -> None:
    from arreio.cli.commands import checkpoints

    if arg not in ("", "--force"):
        chat.say("[yellow]/undo takes no argument but --force (undo over files changed since)[/yellow]")
        return
    run = chat.state.last_run()
    if run is None:
        chat.say("nothing to undo: no message has been sent in this session yet")
        return
    if _changed_nothing(chat):
        chat.say("nothing to undo: the last turn changed no files")
        return
    chat.flush_output()
    if _call(
        chat,
        lambda: checkpoints.undo(run=run, to=None, dry_run=False, yes=True, force=arg == "--force", json_output=False),
    ):
        # The model's history still says it made those changes: the next message tells it they are gone.
        chat.note = "[arreio: the user took back (undid) the file changes your previous turn made.]"


def _call(chat: Any, run: Callable[[], None]) -> bool:
    import typer

    from arreio.engine.core.errors import ArreioError

    try:
        with chat.to_screen():
            run()
    except ArreioError as error:
        chat.say(f"[red]{escape(' '.join(error.message.split()))}[/red]")
        return False
    except typer.Exit as stop:
        return not stop.exit_code
    return True


@command("memory", "/memory — MEMORY.md and USER.md as they are now", arguments=True)
def _memory(chat: Any, arg: str) -> None:
    from arreio.cli.commands import memory

    chat.flush_output()
    _cli(chat, memory.app, "show", arg.split(), slash="memory")
    chat.say(
        "[dim]this session's prompt holds the snapshot taken when it started; changes since reach "
        "the next session (/new)[/dim]"
    )


@command("skills", "/skills — the skills the agent can use", arguments=True)
def _skills(chat: Any, arg: str) -> None:
    from arreio.cli.commands import skills

    chat.flush_output()
    _cli(chat, skills.app, "list", arg.split(), slash="skills")


@command("sessions", "/sessions — saved sessions, newest first", arguments=True)
def _sessions(chat: Any, arg: str) -> None:
    from arreio.cli.commands import sessions

    chat.flush_output()
    _cli(chat, sessions.app, "list", arg.split(), slash="sessions")


@command("resume", "/resume ID — go on with a saved session", arguments=True)
def _resume(chat: Any, arg: str) -> None:
    from arreio.engine.core.errors import ArreioError

    if not arg:
        chat.say("give the session: /resume ID (/sessions lists them)")
        return
    try:
        sid = chat.state.store().resolve(arg)
    except ArreioError as error:
        chat.say(f"[red]{escape(error.message)}[/red]")
        return
    chat.switch(sid)
    chat.show_history()


@command("new", "/new — start a new session (with a fresh memory snapshot)")
def _new(chat: Any, arg: str) -> None:
    chat.switch(None)
    chat.say("new session: the next message starts it")


@command("clear", "/clear — clear the screen (the session goes on)")
def _clear(chat: Any, arg: str) -> None:
    chat.screen.clear()


@command("exit", "/exit — leave (Ctrl-D does too)")
def _exit(chat: Any, arg: str) -> str:
    return LEAVE

"""`arreio chat`: the interactive door. Each message is one run of the same session through the one
conveyor (`run_pipeline`), exactly as `arreio run --continue "…"` would make it; the chat itself
(cli/chat/) only reads input, renders events and answers slash commands.

Only typer is imported here: prompt_toolkit and the engine load when the chat starts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HELP = (
    "Talk to the agent: each message you send is one run on the same session (ceilings, approvals, "
    "compaction, checkpoints and audit exactly as `arreio run`).\n\n"
    "Enter sends; Esc-Enter or a trailing \\ starts a new line; Ctrl-R searches the history; Tab completes "
    "/commands and @paths (an @path attaches that file's text to the message). /help lists the commands.\n\n"
    "Esc or Ctrl-C stops the turn the agent is working on; Ctrl-C twice on an empty prompt, or Ctrl-D, leaves "
    "(`arreio chat --continue` picks it up again).\n\n"
    "Not at a terminal (stdin piped), every line is a message (or, when the input has blank lines, every "
    "block between them), run in turn and printed as `arreio run` prints; the exit code is the last "
    "failing message's (0 when all succeeded)."
)


def chat(
    continue_: Annotated[
        bool, typer.Option("--continue", "-c", help="Continue the most recent session in this directory.")
    ] = False,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume", "-r", metavar="ID", help="Continue a saved session (id or unique prefix).", show_default=False
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            metavar="MODEL",
            help="anthropic/…, openai/…, litellm/…, or offline (default from config).",
            show_default=False,
        ),
    ] = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Same as --model offline: deterministic, no network, $0.")
    ] = False,
    script: Annotated[
        Path | None,
        typer.Option(
            "--script", metavar="FILE", help="Play an offline script of model replies (YAML/JSON).", show_default=False
        ),
    ] = None,
    cd: Annotated[
        Path | None, typer.Option("--cd", "-C", metavar="DIR", help="Chat as if started in DIR.", show_default=False)
    ] = None,
    learn: Annotated[
        bool, typer.Option("--learn", help="After each turn whose gates pass, run the gated learning pass.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve sensitive actions without asking.")] = False,
    max_steps: Annotated[
        int | None,
        typer.Option("--max-steps", metavar="N", min=1, help="Model turns a message may take.", show_default=False),
    ] = None,
) -> None:
    import sys

    from arreio.engine.core.errors import UsageError

    if offline and model and model != "offline":
        raise UsageError(f"--offline and --model {model} disagree; pass one of them")
    if script is not None and model and model != "offline":
        raise UsageError(f"--script plays an offline script; it cannot be combined with --model {model}")
    if continue_ and resume is not None:
        raise UsageError("--continue picks the latest session here; --resume names one: pass one of them")
    if cd is not None:
        from arreio.cli.arguments import enter_folder

        enter_folder(cd)
    cwd = Path.cwd()
    if script is not None:
        script = (cwd / script).resolve()
        if not script.is_file():
            raise UsageError(f"--script {script}: no such file")
    from arreio.cli.chat.session import ChatState

    state = ChatState(
        cwd=cwd, model="offline" if offline else model, script=script, learn=learn, yes=yes, max_steps=max_steps
    )
    if continue_:
        state.session_id = state.latest()
    elif resume is not None:
        state.session_id = state.store().resolve(resume)
    # A person at the terminal: stdin is it, and stdout or (with stdout piped: `| tee log`) stderr shows it.
    from arreio.cli.render import isatty

    if isatty(sys.stdin) and (isatty(sys.stdout) or isatty(sys.stderr)):
        if sys.stdout is None:  # `>&-`: the turns would go nowhere while the prompt asks for more
            raise UsageError(
                "arreio chat: stdout is closed, so the chat's answers would go nowhere; "
                "send it to a file (`> chat.log`) or a pipe instead"
            )
        from arreio.cli.chat.loop import interactive

        raise typer.Exit(interactive(state))
    from arreio.cli.chat.piped import piped

    raise typer.Exit(piped(state, sys.stdin))

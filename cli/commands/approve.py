"""`arreio approve`: decide the call a paused run waits on, then resume it exactly where it stopped.

The decision is written to the session first (so nothing is lost if this process dies), then the run
continues through the one pipeline (`run_pipeline(RunOptions(resume=…))`), rendered like `arreio run`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

HELP = (
    "Approve (or --deny) the sensitive call a paused run waits on, and resume the run.\n\n"
    "Only the pending call is affected; a call already decided is refused (exit 2). A denied call "
    "reaches the model as a denial and the run continues. Exit codes as for `arreio run`."
)


def ask_in_terminal(event: Any) -> bool:
    """`PipelineDeps.ask_approval` for an interactive terminal. The live view has just shown the call
    (`approval_required`: what would run), on its own line; this asks `Run it? [y/N]` (default no).
    Ctrl-C or SIGTERM here raises KeyboardInterrupt — the run is cancelled, the call not run — and
    end of input is a no. The loop's own handlers only cancel the task at its next await, which a
    blocking read never reaches, so the question takes both signals over while it waits
    (cli/interrupts.py)."""
    import sys

    from arreio.cli.chat.echo import tty_fd
    from arreio.cli.interrupts import question, wait_for_input

    with question():
        try:  # the signal may land as soon as the question shows, before the read starts
            sys.stderr.write("Run it? [y/N] ")
            sys.stderr.flush()
            if (fd := tty_fd(sys.stdin)) is not None:
                wait_for_input(fd)  # a line at a time: the read below takes the line that came
            line = sys.stdin.readline()
        except KeyboardInterrupt:
            sys.stderr.write("\n")  # what follows (the cancelled line) starts a line of its own
            raise
    if not line:  # end of input: nobody said yes
        sys.stderr.write("\n")
        return False
    return line.strip().lower() in ("y", "yes")


def approve(
    session_id: Annotated[str, typer.Argument(help="The paused session (id or a unique prefix).")],
    deny: Annotated[bool, typer.Option("--deny", help="Refuse the call; the model is told and continues.")] = False,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why (recorded, and told to the model on --deny).")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the resumed run's events as JSON Lines.")] = False,
    script: Annotated[
        Path | None,
        typer.Option("--script", help="Offline script of model replies for the resumed run.", show_default=False),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model for the resumed run (default: the session's).")
    ] = None,
) -> None:
    import sys

    from arreio.cli.arguments import text
    from arreio.cli.deps import pipeline_deps
    from arreio.cli.inert import call_text
    from arreio.engine.governance.approvals import describe_call
    from arreio.engine.run.decision import decide
    from arreio.engine.run.pipeline import RunOptions

    text(reason, "the --reason")
    options = RunOptions(resume=session_id, script=script, model=model)
    decision = decide(options, pipeline_deps(), approve=not deny, reason=reason or "")
    pending, status, sid = decision.pending, decision.status, decision.session_id
    shown = call_text(describe_call(pending.name, pending.arguments))  # all of it: exactly what runs
    print(f"arreio: {status} {pending.name} ({pending.call_id}): {shown}", file=sys.stderr)
    print(f"arreio: resuming session {sid}", file=sys.stderr)
    from arreio.cli.driving import drive

    raise typer.Exit(drive(options, json_output=json_output))

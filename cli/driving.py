"""Driving one pipeline run from a command (`run`, `approve`): render every event the way the output
asked for (`live`, `text`, `json`), ask approvals at a terminal, show a spinner on a terminal while
nothing else moves, turn Ctrl-C and SIGTERM into a clean cancel, and say on stderr how a run that
did not succeed ended — one line, so scripts see it even with `--json`.

A closed stdout stops the printing, not the run: the views go silent (cli/render.py) and the events
keep being drained, so the run finishes, lands its report and exits with its own code."""

from __future__ import annotations

import contextlib
import signal
import sys
from pathlib import Path
from typing import Any

from arreio.cli.inert import flat

_STDERR_PREFIX = {1: "error", 3: "paused", 4: "stopped", 5: "error"}
# Warnings that the agent's commands run outside the sandbox reach a person in every output mode:
# on stderr, unless the view already puts them on a terminal.
_WALL_WARNINGS = frozenset({"sandbox", "sandbox_off", "gate_sandbox"})
OUTPUTS = ("live", "text", "json", "json-result")


def drive(
    options: Any, *, json_output: bool = False, output: str | None = None, last_message: Path | None = None
) -> int:
    """Run to the end; returns the exit code (docs/architecture.md section 9). `output` is one of OUTPUTS (None:
    live; `json_output` is the older spelling of json); `last_message` also gets the final answer,
    written atomically when the run ends (emptied when it has none: a cancel, a pause, a failure)."""
    import asyncio

    from arreio.cli.deps import pipeline_deps
    from arreio.cli.render import final_answer, isatty
    from arreio.cli.spinner import Spinner, waiting_for
    from arreio.engine.run.pipeline import after_cancel, run_pipeline

    mode = "json" if json_output else (output or "live")
    deps = pipeline_deps()
    # A person at a terminal answers approvals (y/N) — if they can see what would run: the live view
    # shows it on stdout; `--output text` shows it on stderr only when stderr is a terminal.
    if mode not in ("json", "json-result") and isatty(sys.stdin) and (mode == "live" or isatty(sys.stderr)):
        from arreio.cli.commands.approve import ask_in_terminal

        deps.ask_approval = ask_in_terminal
    render, view = _views(mode)
    spinner = Spinner(sys.stderr) if view is not None and isatty(sys.stderr) else None
    shown_on_terminal = (mode == "live" and isatty(sys.stdout)) or (mode == "text" and isatty(sys.stderr))
    seen: dict[str, Any] = {}

    async def go() -> int:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is not None:  # SIGTERM (CI timeouts, systemd, docker stop) cancels like Ctrl-C
            stop = _cancel_once(task)
            loop.add_signal_handler(signal.SIGTERM, stop)
            # Ctrl-C too, once: asyncio's own handler raised KeyboardInterrupt at a second one, wherever
            # the run's clean-up was, and a third within ~10 ms ended the process with no report
            loop.add_signal_handler(signal.SIGINT, stop)
        # Closed here, whatever ends the loop (a view that cannot write: a full disk): left to the
        # loop's shutdown, the generator was closed twice at once and asyncio printed a traceback.
        async with contextlib.aclosing(run_pipeline(options, deps)) as events:
            return await show(events)

    async def show(events: Any) -> int:
        code = 1
        async for event in events:
            if spinner is not None:
                spinner.clear()
            # A cancelled run's last events (the calls it cut short, its `done`) are shown in `--json`
            # only: the other views end at the cancel, which says itself on stderr.
            if mode == "json" or not after_cancel(event):
                render(event)
                if event.type == "warning" and event.code in _WALL_WARNINGS and not shown_on_terminal:
                    _say(f"arreio: warning: {flat(event.message)}")
                if spinner is not None and event.type != "done":
                    spinner.wait(waiting_for(event, answer_shown=mode == "live") if view.at_line_start else None)
            if event.type == "run_start":
                seen["session"] = event.session_id
            elif event.type == "done":
                code = event.exit_code
                seen["done"] = True
                if last_message is not None:
                    write_last_message(last_message, final_answer(event))
                seen["told"] = event
        # Said once the stream has ended: a bug's failed `done` is followed by its exception, which
        # main() says in its own one line.
        if "told" in seen:
            _tell(seen["told"])
        return code

    try:
        return asyncio.run(go())
    except (KeyboardInterrupt, asyncio.CancelledError):
        # The run has stopped and cleaned up; one more Ctrl-C (impatient keys come in bursts) must not
        # end the process by the signal before it says so and exits 130.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if spinner is not None:
            spinner.clear()
        _cancelled(seen)
        from arreio.engine.loop.outcome import EXIT_CODES

        return EXIT_CODES["cancelled"]
    finally:
        if spinner is not None:
            spinner.close()
        if last_message is not None and "done" not in seen:  # cancelled or never started: no answer, and
            write_last_message(last_message, "")  # never an earlier run's either


def _cancel_once(task: Any) -> Any:
    """A signal handler that cancels `task` the first time and lets its clean-up finish after that
    (each further cancel would cut it at its next await)."""
    asked = False

    def stop() -> None:
        nonlocal asked
        if not asked:
            asked = True
            task.cancel()

    return stop


def _views(mode: str) -> tuple[Any, Any]:
    """The renderer for `mode`, and the live view a spinner must not interrupt (None: no spinner)."""
    from arreio.cli.render import JsonRenderer, LiveRenderer, ResultRenderer, TextRenderer, console_for, isatty

    if mode == "json":
        return JsonRenderer(), None
    if mode == "json-result":
        return ResultRenderer(), None
    if mode == "live":
        live = LiveRenderer(console_for(sys.stdout))
        return live, live
    answer = TextRenderer()
    if not isatty(sys.stderr):  # a script: the answer on stdout, the one-line status on stderr (_tell)
        return answer, None
    progress = LiveRenderer(console_for(sys.stderr), answer=False)

    def both(event: Any) -> None:
        answer(event)  # the answer first, then the end line under it
        progress(event)

    return both, progress


def write_last_message(path: Path, text: str) -> None:
    """`--output-last-message`: the final answer (empty when the run has none), replacing the file
    whole. A file that cannot be written is said on stderr; the run's exit code stays the run's."""
    from arreio.engine.core.atomic import write_atomic

    try:
        write_atomic(path, text)
    except OSError as error:
        _say(f"arreio: warning: could not write --output-last-message {path}: {error.strerror or error}")


def _say(line: str) -> None:
    """One line on stderr, even when nobody reads stderr any more (`2>&1 | head -1`)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except BrokenPipeError:
        from arreio.cli.render import silence

        silence(sys.stderr)


def _tell(done: Any) -> None:
    """A run that did not succeed says why on stderr (the live view already showed the details)."""
    prefix = _STDERR_PREFIX.get(done.exit_code)
    if prefix and done.message:
        message = flat(done.message).removeprefix(f"{prefix}: ")  # "paused: paused: …" reads badly
        _say(f"arreio: {prefix}: {message}")


def _cancelled(seen: dict[str, Any]) -> None:
    """The pipeline closed the session, wrote the report and ended its stream in `done` on its way
    out (shown in `--json`); what is left is to say how to go on."""
    hint = f"continue with `arreio run --resume {seen['session']}`" if "session" in seen else "nothing was saved"
    _say(f"arreio: cancelled; {hint}")

"""Driving one pipeline run from a command (`run`, `approve`): render every event, ask approvals at
a terminal, turn Ctrl-C and SIGTERM into a clean cancel, and say on stderr how a run that did not
succeed ended — one line, so scripts see it even with `--json`."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

from arreio.cli.inert import inert

_STDERR_PREFIX = {1: "error", 3: "paused", 4: "stopped", 5: "error"}


def drive(options: Any, *, json_output: bool) -> int:
    """Run to the end; returns the exit code (DESIGN.md section 9)."""
    import asyncio

    from arreio.cli.deps import pipeline_deps
    from arreio.cli.render import JsonRenderer, LiveRenderer
    from arreio.engine.conveyor.pipeline import run_pipeline

    deps = pipeline_deps()
    if not json_output and sys.stdin.isatty():  # a person at a terminal answers approvals (y/N)
        from arreio.cli.commands.approve import ask_in_terminal

        deps.ask_approval = ask_in_terminal
    render = JsonRenderer() if json_output else LiveRenderer()
    seen: dict[str, Any] = {"printed": 0}

    async def go() -> int:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is not None:  # SIGTERM (CI timeouts, systemd, docker stop) cancels like Ctrl-C
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        code = 1
        async for event in run_pipeline(options, deps):
            render(event)
            seen["printed"] += 1
            if event.type == "run_start":
                seen["run"], seen["session"], seen["cwd"] = event.run_id, event.session_id, Path(event.cwd)
            elif event.type == "done":
                code = event.exit_code
                _tell(event)
        return code

    try:
        return asyncio.run(go())
    except (KeyboardInterrupt, asyncio.CancelledError):
        _cancelled(seen, render, json_output)
        from arreio.engine.conveyor.outcome import EXIT_CODES

        return EXIT_CODES["cancelled"]


def _tell(done: Any) -> None:
    """A run that did not succeed says why on stderr (the live view already showed the details)."""
    prefix = _STDERR_PREFIX.get(done.exit_code)
    if prefix and done.message:
        message = " ".join(inert(done.message).split()).removeprefix(f"{prefix}: ")  # "paused: paused: …" reads badly
        print(f"arreio: {prefix}: {message}", file=sys.stderr)


def _cancelled(seen: dict[str, Any], render: Any, json_output: bool) -> None:
    """The pipeline closed the session and wrote the report on its way out; the events it recorded
    after the last one shown (interrupted calls, the final `done`) are shown now, as saved."""
    if json_output and "run" in seen:
        from arreio.engine.events import event_from_json
        from arreio.engine.paths import state_dir

        events = state_dir(seen["cwd"]) / "runs" / seen["run"] / "events.jsonl"
        try:
            lines = events.read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        for line in lines[seen["printed"]:]:
            try:
                render(event_from_json(line))
            except ValueError:
                continue
    hint = f"continue with `arreio run --resume {seen['session']}`" if "session" in seen else "nothing was saved"
    print(f"arreio: cancelled; {hint}", file=sys.stderr)

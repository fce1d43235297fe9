"""`arreio run`: run an agent on a goal, or continue a saved session."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HELP = (
    "Run an agent on a goal (or continue a saved session with --resume).\n\n"
    "The run streams the model's answer and each tool call live; with --json it prints the events "
    "as JSON Lines instead.\n\n"
    "Exit codes: 0 success · 1 failed · 2 bad input · 3 paused for approval · 4 ceiling reached · "
    "5 auth/config error · 130 cancelled."
)


def run(
    goal: Annotated[
        Path | None, typer.Option("--goal", "-g", help="Markdown file stating what to do.", show_default=False)
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help="anthropic/…, openai/…, litellm/…, or offline (default from config).", show_default=False),
    ] = None,
    offline: Annotated[bool, typer.Option("--offline", help="Same as --model offline: deterministic, no network, $0.")] = False,
    script: Annotated[
        Path | None, typer.Option("--script", help="Play an offline script of model replies (YAML/JSON).", show_default=False)
    ] = None,
    resume: Annotated[
        str | None, typer.Option("--resume", "-r", help="Continue a saved session (id or unique prefix).", show_default=False)
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print events as JSON Lines on stdout, nothing else.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve sensitive actions without asking.")] = False,
    max_steps: Annotated[
        int | None, typer.Option("--max-steps", min=1, help="Model turns before the step ceiling.", show_default=False)
    ] = None,
    plan: Annotated[
        Path | None,
        typer.Option("--plan", "-p", help="A plan YAML: units in dependency order, then gates.", show_default=False),
    ] = None,
    learn: Annotated[
        bool, typer.Option("--learn", help="After the gates pass, run the gated learning pass (proposer → gate 0.7 → memory).")
    ] = False,
    tools: Annotated[
        str | None, typer.Option("--tools", help="Offer only these tools (comma-separated).", show_default=False)
    ] = None,
    no_tools: Annotated[
        str | None, typer.Option("--no-tools", help="Never offer these tools (comma-separated).", show_default=False)
    ] = None,
    record: Annotated[
        Path | None, typer.Option("--record", help="Record every model call to a cassette file.", show_default=False)
    ] = None,
    replay: Annotated[
        Path | None,
        typer.Option("--replay", help="Serve model calls from a cassette: hermetic, $0.", show_default=False),
    ] = None,
    replay_mode: Annotated[
        str, typer.Option("--replay-mode", help="strict: a changed request fails the run; lenient: only warns.")
    ] = "strict",
) -> None:
    from arreio.engine.conveyor.pipeline import RunOptions
    from arreio.engine.errors import UsageError

    if offline and model and model != "offline":
        raise UsageError(f"--offline and --model {model} disagree; pass one of them")
    if goal is None and resume is None and plan is None:
        raise UsageError("nothing to run: pass --goal FILE (or --plan FILE), or --resume ID to continue a session")
    if replay_mode not in ("strict", "lenient"):
        raise UsageError(f"--replay-mode must be strict or lenient, not {replay_mode!r}")
    if replay is not None and (script is not None or offline or model):
        raise UsageError("--replay serves the model from a cassette; drop --script/--offline/--model")

    def names(text: str | None) -> list[str]:
        return [n.strip() for n in (text or "").split(",") if n.strip()]

    options = RunOptions(
        goal_path=goal, model="offline" if offline else model, script=script, resume=resume, max_steps=max_steps,
        yes=yes, tools=names(tools) if tools is not None else None, no_tools=names(no_tools), record=record,
        replay=replay, replay_mode=replay_mode, plan=plan, learn=learn,
    )
    from arreio.cli.driving import drive

    raise typer.Exit(drive(options, json_output=json_output))

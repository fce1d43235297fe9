"""`arreio run`: run an agent on a goal, or continue a saved session.

The goal comes however it comes: as text (`arreio run "Fix the test"`), from a file (`--goal FILE`),
from stdin (`--goal -`, or piped with no goal given), or as the new instruction for a session being
continued (`--continue`, `--resume ID`). Piped stdin next to a goal is context: it is attached to
the goal in a fenced block that names it (`git diff | arreio run "Review this diff"`), cut at
STDIN_CAP with a note saying so.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from arreio.cli.stdin import STDIN_CAP, STDIN_WAIT_S, attach, piped, stdin_goal

HELP = (
    "Run an agent on a goal (or continue a saved session with --continue or --resume).\n\n"
    "The goal is the GOAL text, a --goal FILE, or stdin (--goal -, or piped with no goal); piped "
    'stdin next to a goal is attached as context: `git diff | arreio run "Review this diff"`.\n\n'
    "--output live (the default) streams the answer and each tool call; on a pipe it prints plain "
    "lines. --output text prints only the final answer on stdout; --output json (or --json) the "
    "events as JSON Lines; --output json-result one JSON object with the result when the run ends.\n\n"
    "Exit codes: 0 success · 1 failed · 2 bad input · 3 paused for approval · 4 ceiling reached · "
    "5 auth/config error · 130 cancelled."
)


def run(
    text: Annotated[
        str | None,
        typer.Argument(
            metavar="GOAL",
            help="What to do, as text (with --continue/--resume: the new instruction).",
            show_default=False,
        ),
    ] = None,
    goal: Annotated[
        Path | None,
        typer.Option(
            "--goal",
            "-g",
            metavar="FILE",
            help="Markdown file stating what to do; - reads it from stdin.",
            show_default=False,
        ),
    ] = None,
    continue_: Annotated[
        bool, typer.Option("--continue", "-c", help="Continue the most recent session in this directory.")
    ] = False,
    cd: Annotated[
        Path | None,
        typer.Option(
            "--cd",
            "-C",
            metavar="DIR",
            help="Run as if started in DIR (other relative paths are read from there too).",
            show_default=False,
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
    fallback_model: Annotated[
        list[str] | None,
        typer.Option(
            "--fallback-model",
            metavar="MODEL",
            help="A model to go on with when the model keeps failing "
            "(overloaded, 5xx, rate limited, cut off) after its retries; repeat for a chain (replaces config "
            "fallback_models).",
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
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume", "-r", metavar="ID", help="Continue a saved session (id or unique prefix).", show_default=False
        ),
    ] = None,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            metavar="live|text|json|json-result",
            help="live: the run as it happens (default); "
            "text: only the final answer on stdout; json: events as JSON Lines; json-result: one JSON object "
            "when the run ends (the answer, verdict, session_id, usage, cost).",
            show_default=False,
        ),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Same as --output json.")] = False,
    output_schema: Annotated[
        Path | None,
        typer.Option(
            "--output-schema",
            metavar="FILE",
            help="The final answer must be JSON valid against this JSON "
            "Schema (checked; one repair turn, then exit 1); --output text prints that JSON.",
            show_default=False,
        ),
    ] = None,
    last_message: Annotated[
        Path | None,
        typer.Option(
            "--output-last-message", metavar="FILE", help="Also write the final answer to FILE.", show_default=False
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve sensitive actions without asking.")] = False,
    max_steps: Annotated[
        int | None,
        typer.Option(
            "--max-steps", metavar="N", min=1, help="Model turns before the step ceiling.", show_default=False
        ),
    ] = None,
    plan: Annotated[
        Path | None,
        typer.Option(
            "--plan",
            "-p",
            metavar="FILE",
            help="A plan YAML: units in dependency order, then gates.",
            show_default=False,
        ),
    ] = None,
    learn: Annotated[
        bool,
        typer.Option(
            "--learn", help="After the gates pass, run the gated learning pass (proposer → gate 0.7 → memory)."
        ),
    ] = False,
    tools: Annotated[
        str | None,
        typer.Option("--tools", metavar="NAMES", help="Offer only these tools (comma-separated).", show_default=False),
    ] = None,
    no_tools: Annotated[
        str | None,
        typer.Option(
            "--no-tools", metavar="NAMES", help="Never offer these tools (comma-separated).", show_default=False
        ),
    ] = None,
    record: Annotated[
        Path | None,
        typer.Option(
            "--record", metavar="FILE", help="Record every model call to a cassette file.", show_default=False
        ),
    ] = None,
    replay: Annotated[
        Path | None,
        typer.Option(
            "--replay", metavar="FILE", help="Serve model calls from a cassette: hermetic, $0.", show_default=False
        ),
    ] = None,
    replay_mode: Annotated[
        str,
        typer.Option(
            "--replay-mode",
            metavar="strict|lenient",
            help="strict: a changed request fails the run; lenient: only warns.",
        ),
    ] = "strict",
    mcp_prompt: Annotated[
        str | None,
        typer.Option(
            "--mcp-prompt",
            metavar="SERVER/NAME",
            help="The goal is this MCP server's prompt, rendered (see `arreio mcp prompts`).",
            show_default=False,
        ),
    ] = None,
    prompt_args: Annotated[
        list[str] | None,
        typer.Option(
            "--arg", metavar="KEY=VALUE", help="An argument of --mcp-prompt (repeatable).", show_default=False
        ),
    ] = None,
) -> None:
    from arreio.cli.arguments import text as utf8
    from arreio.cli.driving import OUTPUTS
    from arreio.engine.core.errors import UsageError
    from arreio.engine.run.goal import read_goal
    from arreio.engine.run.pipeline import RunOptions

    try:
        utf8(text, "the goal")
        for arg in prompt_args or []:  # rendered into the goal
            utf8(arg, "an --arg value")
        if offline and model and model != "offline":
            raise UsageError(f"--offline and --model {model} disagree; pass one of them")
        if output is not None and output not in OUTPUTS:
            raise UsageError(f"--output must be one of {', '.join(OUTPUTS)}, not {output!r}")
        if json_output and output not in (None, "json"):
            raise UsageError(f"--json and --output {output} disagree; pass one of them")
        if replay_mode not in ("strict", "lenient"):
            raise UsageError(f"--replay-mode must be strict or lenient, not {replay_mode!r}")
        if replay is not None and (script is not None or offline or model):
            raise UsageError("--replay serves the model from a cassette; drop --script/--offline/--model")
        if text is not None and goal is not None:
            raise UsageError("the goal is given twice: pass it as text or as --goal FILE, not both")
        if continue_ and resume is not None:
            raise UsageError("--continue picks the latest session here; --resume names one: pass one of them")
        if mcp_prompt is not None and (text is not None or goal is not None or plan is not None):
            raise UsageError("--mcp-prompt is the goal: drop the goal text, --goal and --plan")
        if (
            plan is not None
            and text is None
            and not plan.exists()
            and (" " in str(plan) or plan.suffix.lower() not in (".yaml", ".yml", ".json"))
        ):
            # `claude -p "…"` is a prompt; here -p is a plan file
            raise UsageError(
                f"plan file not found: {plan} — -p is --plan (a plan YAML); the goal is the text itself: "
                f'arreio run "{plan}"'
            )
        if prompt_args and mcp_prompt is None:
            raise UsageError("--arg is an argument of --mcp-prompt: name the prompt with --mcp-prompt SERVER/NAME")
        if cd is not None:
            from arreio.cli.arguments import enter_folder

            enter_folder(cd)
        cwd = Path.cwd()
        if continue_:
            resume = _latest_session(cwd)
        continuing = resume is not None
        if mcp_prompt is not None:  # rendered by its server; from here on it is the goal text
            from arreio.cli.commands.mcp import prompt_goal

            text = prompt_goal(mcp_prompt, prompt_args or [])

        from_stdin = goal is not None and str(goal) == "-"
        goal_text, piped_goal = text, False
        if from_stdin:
            goal, goal_text = None, stdin_goal()
        elif goal_text is None and goal is None:
            if plan is None:  # no goal given: piped stdin is the goal (or, continuing, the new instruction)
                goal_text, _ = piped(wait_s=STDIN_WAIT_S, cap=None)
                piped_goal = goal_text is not None
        else:  # a goal given, and piped stdin too: that is context for it
            context, cut = piped(wait_s=STDIN_WAIT_S, cap=STDIN_CAP)
            if context is not None:
                base = goal_text if goal_text is not None else read_goal(RunOptions(goal_path=goal, cwd=cwd))
                goal, goal_text = None, attach(base or "", context, cut)
        if goal_text is not None and not goal_text.strip():
            raise UsageError(
                "the goal is empty" + (" (stdin gave only blank lines)" if from_stdin or piped_goal else "")
            )
        if goal_text is None and goal is None and not continuing and plan is None:
            raise UsageError(
                'nothing to run: pass the goal as text (`arreio run "…"`), --goal FILE or --plan FILE, '
                "or --continue / --resume ID to continue a session"
            )
        if last_message is not None and last_message.is_dir():
            raise UsageError(f"--output-last-message {last_message} is a folder; give a file name")
        if last_message is not None and not (Path.cwd() / last_message).parent.is_dir():
            raise UsageError(f"--output-last-message {last_message}: the folder {last_message.parent} does not exist")

        def names(value: str | None) -> list[str]:
            return [n.strip() for n in (value or "").split(",") if n.strip()]

        options = RunOptions(
            goal_path=goal,
            goal_text=goal_text,
            model="offline" if offline else model,
            script=script,
            resume=resume,
            max_steps=max_steps,
            yes=yes,
            tools=names(tools) if tools is not None else None,
            no_tools=names(no_tools),
            record=record,
            replay=replay,
            replay_mode=replay_mode,
            plan=plan,
            learn=learn,
            cwd=cwd,
            output_schema=output_schema,
            fallback_models=[m.strip() for m in fallback_model if m.strip()] if fallback_model else None,
        )
    except UsageError:
        # Bad input ends the run before it starts: the file gets no answer, and never keeps an
        # earlier run's (docs/running.md; a missing --goal file left it holding the last answer).
        if (
            last_message is not None
            and (Path.cwd() / last_message).parent.is_dir()
            and not (Path.cwd() / last_message).is_dir()
        ):
            from arreio.cli.driving import write_last_message

            write_last_message(Path.cwd() / last_message, "")
        raise

    from arreio.cli.driving import drive

    raise typer.Exit(
        drive(
            options,
            json_output=json_output,
            output=output,
            last_message=cwd / last_message if last_message is not None else None,
        )
    )


def _latest_session(cwd: Path) -> str:
    """`--continue`: the session last worked on in this directory, or a UsageError saying there is none."""
    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.paths import state_dir
    from arreio.engine.session.store import SessionStore

    store = SessionStore(state_dir(cwd) / "sessions")
    found = store.latest(cwd)
    if (notice := store.passed_over(found)) is not None:
        print(f"arreio: warning: {notice}", file=sys.stderr)
    if found is None:
        raise UsageError(f'no session to continue in {cwd}: start one with `arreio run "…"`')
    return found

"""`arreio batch SUITE.yaml`: every task × attempt of a suite as one run through the conveyor, on
local worker processes (`-j N`) or a Ray cluster (`--ray [ADDRESS]`); results in `.arreio/batches/<id>/`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

HELP = (
    "Run a suite of tasks: each task × attempt is one unattended run (approvals decided by policy; a "
    "pause fails the attempt) in its own copy of the workdir, with its own state folder.\n\n"
    "Results go to .arreio/batches/<id>/: results.jsonl (one row per attempt), summary.json, each "
    "attempt's session and report. --ray starts a local Ray runtime; --ray ADDRESS joins a cluster "
    "(auto, or ray://host:port); it needs pip install 'arreio\\[ray]'.\n\n"
    "Exit codes: 0 every attempt passed (or --min-pass-rate met) · 1 otherwise · 2 bad input · "
    "4 a budget stopped the batch (partial summary) · 5 config error, or --ray without Ray installed · "
    "130 cancelled."
)
LOCAL_RAY = "local"  # `--ray` with no address: start a Ray runtime on this machine
_ADDRESS_LIKE = ("auto", LOCAL_RAY)


class BatchCommand(TyperCommand):
    """`--ray` takes an optional ADDRESS (click options cannot say that): a bare `--ray` — last, or
    followed by another option or by a suite file — becomes `--ray=local`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        out = list(args)
        for i, arg in enumerate(out):
            if arg == "--":
                break
            if arg == "--ray":
                following = out[i + 1] if i + 1 < len(out) else None
                if following is None or following.startswith("-") or not _looks_like_address(following):
                    out[i] = f"--ray={LOCAL_RAY}"
        return super().parse_args(ctx, out)


def _looks_like_address(value: str) -> bool:
    return (
        value in _ADDRESS_LIKE or value.startswith("ray://") or (":" in value and not value.endswith((".yaml", ".yml")))
    )


def batch(
    suite: Annotated[
        Path | None,
        typer.Argument(metavar="SUITE", help="The suite YAML (with --resume: optional).", show_default=False),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            metavar="N",
            min=1,
            help="Attempts at once on this machine (default: batch.workers, 1).",
            show_default=False,
        ),
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option(
            "--repeat", "-k", metavar="K", min=1, help="Attempts per task (pass@k in the summary).", show_default=False
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="[ADDRESS]",
            help="Run attempts as Ray tasks: a local runtime, or join ADDRESS (auto, ray://host:port).",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", "-m", metavar="MODEL", help="Model for tasks without script/cassette.", show_default=False
        ),
    ] = None,
    offline: Annotated[bool, typer.Option("--offline", help="Same as --model offline: deterministic, $0.")] = False,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            "-r",
            metavar="ID",
            help="Finish a batch: attempts with a row are not run again.",
            show_default=False,
        ),
    ] = None,
    filter_: Annotated[
        str | None,
        typer.Option(
            "--filter", metavar="GLOB", help="Only tasks whose id matches (comma-separated globs).", show_default=False
        ),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Rows as JSON Lines as they land, then the summary.")
    ] = False,
    min_pass_rate: Annotated[
        float | None,
        typer.Option(
            "--min-pass-rate",
            metavar="R",
            min=0.0,
            max=1.0,
            help="Exit 0 when this share of attempts passed.",
            show_default=False,
        ),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            metavar="USD",
            min=0.0,
            help="Budget: start no attempt once this much is spent (exit 4).",
            show_default=False,
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens",
            metavar="N",
            min=1,
            help="Budget: start no attempt once this many tokens are used (exit 4).",
            show_default=False,
        ),
    ] = None,
    learn: Annotated[
        bool, typer.Option("--learn", help="After the batch, learn from attempts that passed (once each task).")
    ] = False,
    record: Annotated[
        Path | None,
        typer.Option("--record", metavar="DIR", help="Record each task's cassette into DIR.", show_default=False),
    ] = None,
    replay: Annotated[
        Path | None,
        typer.Option(
            "--replay",
            metavar="DIR",
            help="Serve each task from DIR/<task>.cassette.jsonl: hermetic, $0.",
            show_default=False,
        ),
    ] = None,
) -> None:
    from arreio.cli.batch_driver import BatchRequest, run_batch_command
    from arreio.engine.core.errors import UsageError

    if offline and model and model != "offline":
        raise UsageError(f"--offline and --model {model} disagree; pass one of them")
    if suite is None and resume is None:
        raise UsageError("nothing to run: pass a SUITE.yaml (or --resume ID to finish a batch)")
    if record is not None and replay is not None:
        raise UsageError("--record makes cassettes and --replay serves them; pass one of them")
    for flag, folder in (("--record", record), ("--replay", replay)):
        if folder is not None and folder.exists() and not folder.is_dir():
            raise UsageError(f"{flag} {folder} is a file; give a folder")
    if replay is not None and not replay.is_dir():
        raise UsageError(f"--replay {replay}: no such folder")
    request = BatchRequest(
        suite=suite,
        jobs=jobs,
        repeat=repeat,
        ray=ray,
        model="offline" if offline else model,
        resume=resume,
        filter=filter_,
        json_output=json_output,
        min_pass_rate=min_pass_rate,
        max_cost=max_cost,
        max_tokens=max_tokens,
        learn=learn,
        record=record.resolve() if record else None,
        replay=replay.resolve() if replay else None,
    )
    raise typer.Exit(run_batch_command(request))

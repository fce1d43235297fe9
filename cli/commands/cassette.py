"""`arreio cassette`: inspect and compare cassettes recorded with `arreio run --record FILE`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arreio.engine.core.wording import counted

app = typer.Typer(
    help="Inspect and compare recorded runs (cassettes from `arreio run --record FILE`; replay with --replay FILE).",
    no_args_is_help=True,
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
CassetteArg = Annotated[Path, typer.Argument(help="A cassette file (.cassette.jsonl).", show_default=False)]


def _money(value: float | None) -> str:
    if value is None:
        return "unknown (no price for this model)"
    return f"${value:.4f}" if value else "$0"


@app.command("show")
def show(path: CassetteArg, json_output: JsonFlag = False) -> None:
    """Summarise a cassette: calls, faults, tools, tokens, and the cost a replay saves."""
    import json

    from arreio.engine.providers.cassette import load_cassette
    from arreio.engine.providers.cassette_reading import summarise

    info = summarise(load_cassette(path))
    if json_output:
        print(json.dumps(info, ensure_ascii=False, indent=2))
        return
    from arreio.cli.inert import shown as escape  # markup-safe and inert
    from arreio.cli.render import console_for

    c = console_for()  # a pipe gets whole lines, not 80 columns
    usage = info["usage"]
    c.print(
        f"[bold]cassette {escape(str(path))}[/bold] · format v{info['version']} · {escape(info['model'])}"
        + (f" · recorded {info['created_at']}" if info["created_at"] else "")
    )
    c.print(
        f"calls: {info['calls']}"
        + (f" ({counted(len(info['faults']), 'fault')}, replayed as faults)" if info["faults"] else "")
    )
    for fault in info["faults"]:
        c.print(f"  [yellow]{escape(fault)}[/yellow]")
    used = ", ".join(f"{name} ×{count}" for name, count in sorted(info["tools_used"].items())) or "none"
    c.print(f"tools used: {escape(used)}")
    c.print(f"tools offered: {escape(', '.join(info['tools_offered']) or 'none')}")
    c.print(
        f"tokens: {usage['input_tokens']} in · {usage['output_tokens']} out · {usage['cache_read_tokens']} cache read"
        f" · {usage['cache_write_tokens']} cache write"
    )
    c.print(f"cost a replay saves: {_money(info['cost_saved_usd'])}")
    for problem in info["problems"]:
        c.print(f"[yellow]note: {escape(problem)}[/yellow]")


@app.command("diff")
def diff(
    a: Annotated[Path, typer.Argument(help="The earlier cassette.", show_default=False)],
    b: Annotated[Path, typer.Argument(help="The later cassette.", show_default=False)],
    json_output: JsonFlag = False,
) -> None:
    """Compare two cassettes call by call: same / changed (what) / added / removed.

    Exit code 0 when every call is the same, 1 when anything differs (handy in CI)."""
    import json

    from arreio.engine.providers.cassette import load_cassette
    from arreio.engine.providers.cassette_reading import compare_cassettes

    left, right = load_cassette(a), load_cassette(b)
    rows = compare_cassettes(left, right)
    model_note = (
        f"model differs: {left.header.model} → {right.header.model}" if left.header.model != right.header.model else ""
    )
    differs = bool(model_note) or any(r.status != "same" for r in rows)
    if json_output:
        print(
            json.dumps(
                {
                    "a": str(a),
                    "b": str(b),
                    "same": not differs,
                    "model": model_note or None,
                    "calls": [{"n": r.n, "status": r.status, "changes": r.changes} for r in rows],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        from arreio.cli.inert import shown as escape  # markup-safe and inert
        from arreio.cli.render import console_for

        c = console_for()  # a pipe gets whole lines, not 80 columns
        style = {"same": "dim", "changed": "yellow", "added": "green", "removed": "red"}
        if model_note:
            c.print(f"[yellow]{escape(model_note)}[/yellow]")
        for r in rows:
            detail = f": {'; '.join(r.changes)}" if r.changes else ""
            c.print(f"[{style[r.status]}]call {r.n}: {r.status}{escape(detail)}[/{style[r.status]}]")
        counts = {s: sum(1 for r in rows if r.status == s) for s in ("same", "changed", "added", "removed")}
        c.print(", ".join(f"{n} {s}" for s, n in counts.items() if n) or "both cassettes are empty")
    raise typer.Exit(1 if differs else 0)

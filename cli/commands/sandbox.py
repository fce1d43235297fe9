"""`arreio sandbox`: what the OS sandbox around `shell` does here — mode, network, bwrap, protected paths.

Only typer and the standard library at import time; the engine is imported by the command.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from arreio.engine.core.ports import process_env

app = typer.Typer(help="The OS sandbox shell runs in: see what is active here.", no_args_is_help=True)


@app.command("status")
def status(json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Show the sandbox mode in force, network, the bwrap found (or why there is none) and the protected paths."""
    from pathlib import Path

    from arreio.engine.core.config import load_settings
    from arreio.engine.core.paths import state_dir
    from arreio.engine.tools.sandbox import parse_sandbox
    from arreio.engine.tools.sandbox import status as sandbox_status

    cwd = Path.cwd().resolve()
    env = process_env()
    settings = parse_sandbox(load_settings(cwd, env).sandbox)
    shown = sandbox_status(cwd, env, settings, state_dir(cwd, env))
    if json_output:
        print(json.dumps(shown, indent=2))
        return
    for line in _lines(shown, str(cwd)):
        print(line)


def _lines(shown: dict, cwd: str) -> list[str]:
    if shown["mode"] == "off":
        headline = "sandbox: off — shell runs unsandboxed (sandbox.mode: off)"
    elif shown["active"]:
        headline = f"sandbox: active ({shown['mode']})"
    else:
        headline = f"sandbox: NOT active — shell runs unsandboxed: {shown['unavailable']}"
    writable = {"workspace-write": [cwd, *shown["writable_roots"]], "read-only": []}.get(shown["mode"])
    bwrap = shown["bwrap"] or "not found"
    if shown["version"]:
        bwrap += f" ({shown['version']})"
    lines = [headline, f"mode: {shown['mode']}", f"network: {'on' if shown['network'] else 'off'}", f"bwrap: {bwrap}"]
    if writable is not None:
        lines.append(f"writable: {', '.join(writable) or 'nothing'} (and a private /tmp)")
    lines.append("protected (read-only even inside the working directory):")
    lines += [f"  {path}" for path in shown["protected"]]
    if shown["mode"] != "off":
        limits, how = shown["limits"], shown.get("limits_enforced") or {}
        lines.append("limits of one call (sandbox.limits):")
        for key, label, unit in (
            ("processes", "processes", ""),
            ("memory_mb", "memory", " MB"),
            ("file_mb", "file_size", " MB"),
            ("tmp_mb", "tmp", " MB"),
        ):
            enforced = f" — {how[label]}" if label in how else ""
            lines.append(f"  {label.replace('_', ' ')}: {limits[key]}{unit}{enforced}")
    if shown.get("unix_sockets"):
        lines.append(f"unix sockets outside the sandbox: {shown['unix_sockets']}")
    withheld = shown.get("env_withheld") or []
    lines.append("environment withheld from shell and command gates: " + (", ".join(withheld) or "nothing"))
    return lines

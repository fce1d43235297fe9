"""`arreio audit`: check the hash chain of `.arreio/audit.jsonl` and show recent entries."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arreio.cli.inert import inert
from arreio.engine.core.wording import counted

app = typer.Typer(help="The tamper-evident audit journal: verify its chain, show recent entries.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _journal():
    from arreio.engine.core.paths import state_dir
    from arreio.engine.walls.audit import AuditJournal

    return AuditJournal(state_dir(), redactor=None)  # reading only


@app.command("verify")
def verify(json_output: JsonFlag = False) -> None:
    """Check every link of the chain; exit 1 and name the first broken entry if one was edited or deleted."""
    import json

    from arreio.engine.core.paths import display_path

    journal = _journal()
    result = journal.verify(_anchors(journal.path.parent))
    where = display_path(journal.path)
    if json_output:
        print(
            json.dumps(
                {
                    "path": where,
                    "ok": result.ok,
                    "entries": result.entries,
                    "broken_line": result.broken_line,
                    "reason": result.reason,
                }
            )
        )
    elif result.ok:
        print(
            f"audit journal intact: {counted(result.entries, 'entry', 'entries')} ({where})"
            if result.entries
            else f"audit journal empty ({where})"
        )
    else:
        print(
            f"audit journal BROKEN at line {result.broken_line} of {where}: {result.reason} "
            f"({counted(result.entries, 'entry', 'entries')} before it check out)"
        )
    if not result.ok:
        raise typer.Exit(1)


def _anchors(state: Path) -> list[tuple[str, int, str]]:
    """The journal heads run reports recorded (`audit_head`): proof of how long the journal was."""
    from arreio.engine.core.nesting import json_loads
    from arreio.engine.core.regular_file import Limit, read_bytes

    out = []
    for report in sorted((state / "runs").glob("*/report.json")):
        try:
            head = json_loads(read_bytes(report, limit=Limit.RECORD)).get("audit_head")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(head, dict) and isinstance(head.get("seq"), int) and isinstance(head.get("hash"), str):
            out.append((f"run {report.parent.name}", head["seq"], head["hash"]))
    return out


def _summary(entry: dict) -> str:
    """One entry as a person reads it: the kind's own sentence, else `key value` pairs, whole."""
    payload = entry.get("payload") or {}
    kind = entry.get("kind")
    if kind == "tool_call":
        return f"{payload.get('name')} [{payload.get('status')}] {payload.get('args_digest', '')}"
    if kind == "approval":
        reason = f" — {payload['reason']}" if payload.get("reason") else ""
        return f"{payload.get('name')} {payload.get('status')} by {payload.get('by')}{reason}"
    if kind == "run_start":
        return f"{payload.get('model')}" + (" · resumed" if payload.get("resumed") else "")
    if kind == "run_end":
        cost = payload.get("cost_usd")
        return f"{payload.get('verdict')} · {counted(int(payload.get('tool_calls') or 0), 'tool call')} · " + (
            f"${cost:.4f}" if cost is not None else "cost unknown"
        )
    if kind == "gate":
        mark = "passed" if payload.get("passed") else "failed"
        return f"{payload.get('gate')} {mark}" + (f" — {payload['detail']}" if payload.get("detail") else "")
    if kind == "model_switch":
        return f"{payload.get('from')} → {payload.get('to')}"
    if kind == "hook":  # a user's hook ran: at what, on what, what it answered
        on = payload.get("tool_name") or payload.get("verdict")
        return (
            f"{payload.get('moment')}{f' ({on})' if on else ''} `{payload.get('command')}` → "
            f"{payload.get('outcome')} (exit {payload.get('exit_code')}) · {payload.get('source')}"
        )
    skip = {"run_id", "session_id"}
    return " · ".join(
        f"{k} {_readable(v)}" for k, v in payload.items() if k not in skip and v not in (None, "", [], {})
    )


def _readable(value: object) -> str:
    """A value as text: strings as they are, numbers plainly, anything nested as compact JSON."""
    import json

    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value:g}" if isinstance(value, float) else str(value)
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


@app.command("tail")
def tail(
    n: Annotated[int, typer.Option("-n", "--lines", min=1, help="How many entries.")] = 20,
    run: Annotated[str | None, typer.Option("--run", help="Only this run (id or prefix).", show_default=False)] = None,
    json_output: JsonFlag = False,
) -> None:
    """Show the most recent entries (oldest first)."""
    import json

    rows = _journal().tail(n, run)
    if json_output:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return
    if not rows:
        print("no audit entries" + (f" for run {run}" if run else ""))
        return
    for row in rows:
        run_id = (row.get("payload") or {}).get("run_id", "")
        print(inert(f"{row.get('seq'):>5}  {row.get('at')}  {row.get('kind'):<12} {run_id:<28} {_summary(row)}"))

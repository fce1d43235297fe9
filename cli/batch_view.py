"""What `arreio batch` shows while it runs and when it ends: a live rich table at a terminal (done,
running, failed, elapsed, spend so far, the attempts running now), a line per finished attempt on a
pipe, JSON Lines with `--json` (`{"type": "attempt", …row}` as each lands, then `{"type": "summary", …}`).
The final summary: pass rate per task and overall, pass@k, mean/p90 duration, tokens, cost, cache share."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from arreio.cli.inert import flat
from arreio.cli.inert import shown as escape
from arreio.cli.render import console_for, isatty, money, silence
from arreio.engine.core.wording import counted

_RUNNING_SHOWN = 8  # running attempts listed in the live table; the rest are counted


def make_view(
    *, json_output: bool, batch_id: str, planned: int, done_before: int, backend: str, out: Any = None
) -> Any:
    """The view for where `out` (stdout by default) goes."""
    out = out or sys.stdout
    if json_output:
        return JsonView(out)
    if isatty(out):
        return LiveView(batch_id, planned, done_before, backend, out)
    return PlainView(batch_id, planned, done_before, backend, out)


def _pct(share: float | None) -> str:
    return "–" if share is None else f"{share * 100:.0f}%"


def _spend(totals: Any) -> str:
    cost = money(totals.cost_usd) + (" + unknown" if totals.cost_unknown else "")
    return f"{cost} · {totals.tokens:,} tokens"


def clip(text: str, limit: int) -> str:
    """`text` up to `limit` characters; a longer one is cut at a word and says so with '…' (a user
    trial: rows ended mid-word, 'run this task on its o', and read as whole)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    return (head.rsplit(" ", 1)[0] if " " in head[limit // 2 :] else head) + "…"


def row_line(row: dict[str, Any]) -> str:
    mark = "✓" if row.get("passed") else "✗"
    head = f"{mark} {row['task']} #{row['attempt']}  {row.get('verdict')}  {row.get('duration_s', 0):.1f}s"
    extra = f"  {counted(int(row.get('steps') or 0), 'step')}"
    if int(row.get("tries") or 1) > 1:
        extra += f"  (try {row['tries']})"
    # a run's message can carry a model server's error text: inert and flat before it is cut (a pipe
    # gets these lines as they are, and a newline in them would fake a row of its own)
    why = "" if row.get("passed") else f" — {clip(flat(str(row.get('message') or '')), 200)}"
    warned = row.get("warnings") or []  # what the attempt left out (a FIFO in the workdir): said, not only stored
    said = (
        f"  (warning: {clip(flat(str(warned[0])), 160)}{f'; +{len(warned) - 1} more' if len(warned) > 1 else ''})"
        if warned
        else ""
    )
    return head + extra + why + said


def summary_lines(summary: dict[str, Any], path: Path | None) -> list[str]:
    """The end of a batch in plain lines (the live view draws the task table with rich)."""
    pass_at = "  ".join(f"pass@{k} {v:.2f}" for k, v in summary.get("pass_at", {}).items())
    lines = [
        f"batch {summary['batch']}: {summary['attempts']}/{summary['planned']} attempts · "
        f"{summary['passed']} passed · {summary['failed']} failed · pass rate {_pct(summary['pass_rate'])}"
        + (f" · {pass_at}" if summary["repeat"] > 1 else "")
    ]
    width = max((len(t) for t in summary["tasks"]), default=4)
    for name, task in summary["tasks"].items():
        # a stopped batch's task with no attempt landed may have been running: "not run" was untrue
        rate = (
            _pct(task["pass_rate"]) if task["attempts"] else ("not finished" if summary.get("stopped") else "not run")
        )
        lines.append(f"  {name:<{width}}  {task['passed']}/{task['attempts']}  {rate}")
        lines += [f"  {'':<{width}}    {clip(flat(reason), 160)}" for reason in task["failures"][:1]]
    tokens = summary["tokens"]
    cost = (
        money(summary["cost_usd"])
        if summary["cost_usd"] is not None
        else f"{money(summary['cost_known_usd'])} + unknown"
    )
    lines.append(
        f"duration mean {summary['duration_s']['mean']:.1f}s · p90 {summary['duration_s']['p90']:.1f}s · "
        f"tokens {tokens['input']:,} in / {tokens['output']:,} out / {tokens['cached']:,} cached · "
        f"{cost} · {_pct(summary['cache_share'])} cached"
    )
    if summary.get("retried"):
        lines.append(f"retried after a lost worker: {counted(summary['retried'], 'attempt')}")
    if learning := summary.get("learning"):
        lines.append(
            f"learning: {learning['applied']} applied, {learning['rejected']} rejected, {learning['failed']} "
            f"failed, from {counted(learning['attempts'], 'passed attempt')}"
            + (f" ({'; '.join(flat(e) for e in learning['errors'])})" if learning.get("errors") else "")
        )
    if summary.get("stopped"):
        lines.append(f"stopped: {flat(str(summary['stopped']))}")
    if path is not None:
        lines.append(f"summary: {path}")
    return lines


class _Quiet:
    """A view is a context manager; the plain ones need nothing around the batch."""

    def __init__(self, out: Any) -> None:
        self.out = out

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def _print(self, line: str) -> None:
        stream = self.out
        try:
            print(line, file=stream, flush=True)
        except BrokenPipeError:
            silence(stream)


class JsonView(_Quiet):
    def update(self, update: Any, totals: Any, running: list) -> None:
        if update.kind == "finished":
            self._print(json.dumps({"type": "attempt", **update.row}, ensure_ascii=False, separators=(",", ":")))

    def final(self, summary: dict[str, Any], path: Path) -> None:
        self._print(
            json.dumps({"type": "summary", **summary, "path": str(path)}, ensure_ascii=False, separators=(",", ":"))
        )


class PlainView(_Quiet):
    def __init__(self, batch_id: str, planned: int, done_before: int, backend: str, out: Any) -> None:
        super().__init__(out)
        self.batch_id, self.planned, self.done_before, self.backend = batch_id, planned, done_before, backend

    def __enter__(self) -> Any:
        resumed = f", {self.done_before} done before" if self.done_before else ""
        self._print(f"batch {self.batch_id}: {counted(self.planned, 'attempt')} ({self.backend}{resumed})")
        return self

    def update(self, update: Any, totals: Any, running: list) -> None:
        if update.kind == "finished":
            self._print(row_line(update.row))

    def final(self, summary: dict[str, Any], path: Path) -> None:
        for line in summary_lines(summary, path):
            self._print(line)


class LiveView(PlainView):
    """rich's Live at a terminal: finished attempts scroll above, the table of what runs stays below."""

    def __init__(self, batch_id: str, planned: int, done_before: int, backend: str, out: Any) -> None:
        super().__init__(batch_id, planned, done_before, backend, out)
        self.console = console_for(out)
        self.t0 = time.monotonic()
        self.live: Any = None

    def __enter__(self) -> Any:
        from rich.live import Live

        self.live = Live(self._table(None, []), console=self.console, refresh_per_second=4, transient=True)
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)
            self.live = None

    def _table(self, totals: Any, running: list) -> Any:
        """The header line above the table of what runs. (As the table's title it was wrapped to the
        two narrow columns' width: a stack of words down the left of a wide terminal.)"""
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        now = time.monotonic()
        done = totals.attempts if totals else self.done_before
        failed = totals.failed if totals else 0
        title = (
            f"batch {self.batch_id} · {done}/{self.planned} done · {len(running)} running · "
            f"{failed} failed · {now - self.t0:.0f}s elapsed" + (f" · {_spend(totals)}" if totals else "")
        )
        header = Text(title, no_wrap=True, overflow="ellipsis")
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("running")
        table.add_column("for", justify="right")
        for spec, started in running[:_RUNNING_SHOWN]:
            table.add_row(escape(f"{spec.task.id} #{spec.attempt}"), f"{now - started:.0f}s")
        if len(running) > _RUNNING_SHOWN:
            table.add_row(f"… {len(running) - _RUNNING_SHOWN} more", "")
        return Group(header, table)

    def update(self, update: Any, totals: Any, running: list) -> None:
        if update.kind == "finished":
            # soft_wrap: a long line is the terminal's to wrap (rich broke a path with a hard newline)
            self.console.print(
                escape(row_line(update.row)), style=None if update.row.get("passed") else "red", soft_wrap=True
            )
        if self.live is not None:
            self.live.update(self._table(totals, running))

    def final(self, summary: dict[str, Any], path: Path) -> None:
        for line in summary_lines(summary, path):
            self.console.print(escape(line), soft_wrap=True)

"""Rendering run events: live for a person (rich), JSON Lines for a machine. One stream, two views."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from rich.console import Console

from arreio.cli.inert import shown as escape  # markup-safe and inert
from arreio.engine.wording import counted

_ARG_PREVIEW = 60


def _format_args(arguments: dict[str, Any]) -> str:
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text = text.replace("\n", "⏎")
        if len(text) > _ARG_PREVIEW:
            text = text[:_ARG_PREVIEW] + f"… ({len(str(value))} chars)"
        parts.append(f"{key}={text!r}" if isinstance(value, str) else f"{key}={text}")
    return ", ".join(parts)


class JsonRenderer:
    """One JSON object a line on stdout, `type` first; nothing else goes to stdout."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def __call__(self, event: Any) -> None:
        self.out.write(event.model_dump_json() + "\n")
        self.out.flush()


class _ChildView:
    """How a sub-agent's events read inside the parent's stream: indented, tagged, quieter."""

    def _child(self, agent: str, event: Any) -> None:
        c = self.console
        pad = "    " * agent.count(".") + "  "
        if event.type == "text_delta":
            c.print(f"[dim]{escape(event.text)}[/dim]", end="", soft_wrap=True)
            self._in_text = True
        elif event.type == "tool_start":
            self._end_text()
            c.print(f"{pad}[cyan]↳ {escape(agent)}[/cyan] ● {escape(event.name)}({escape(_format_args(event.arguments))})")
        elif event.type == "tool_end":
            style = "red" if event.is_error else "dim"
            c.print(f"{pad}    [{style}]{'✗' if event.is_error else '⎿'} {escape(event.preview)}[/{style}]")
        elif event.type in ("warning", "ceiling", "retry"):
            self._end_text()
            c.print(f"{pad}[yellow]↳ {escape(agent)}: {escape(getattr(event, 'message', '') or getattr(event, 'reason', ''))}[/yellow]")
        elif event.type == "unit_end":
            self._end_text()
            c.print(f"{pad}[cyan]↳ {escape(agent)} {event.verdict}[/cyan]")


class LiveRenderer(_ChildView):
    """Streams the answer as it arrives and shows each tool call and its outcome."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)
        self._in_text = False
        self._failed_gates: list[tuple[str, str]] = []

    def _end_text(self) -> None:
        if self._in_text:
            self.console.print()
            self._in_text = False

    def __call__(self, event: Any) -> None:
        kind = event.type
        c = self.console
        agent = getattr(event, "agent", None)
        if agent:  # a sub-agent's event: shown nested under the parent's delegate call
            self._child(agent, event)
            return
        if kind == "run_start":
            how = "resuming" if event.resumed else "session"
            c.print(f"[dim]arreio · {event.model} · {how} {event.session_id}[/dim]")
        elif kind == "unit_start" and event.unit_id != "main":
            self._end_text()
            c.print(f"[bold magenta]▸ unit {escape(event.unit_id)}[/bold magenta] [dim]{escape(event.goal)}[/dim]")
        elif kind == "unit_end":
            self._end_text()
        elif kind == "text_delta":
            c.print(escape(event.text), end="", soft_wrap=True)
            self._in_text = True
        elif kind == "thinking_delta":
            c.print(f"[dim italic]{escape(event.text)}[/dim italic]", end="", soft_wrap=True)
            self._in_text = True
        elif kind == "tool_start":
            self._end_text()
            c.print(f"[bold cyan]●[/bold cyan] [bold]{escape(event.name)}[/bold]({escape(_format_args(event.arguments))})")
        elif kind == "tool_end":
            style = "red" if event.is_error else "dim"
            mark = "✗" if event.is_error else "⎿"
            size = f" [{event.chars} chars]" if event.chars > len(event.preview) else ""
            c.print(f"  [{style}]{mark} {escape(event.preview)}{size}[/{style}]")
        elif kind == "retry":
            self._end_text()
            c.print(f"[yellow]↻ retry {event.attempt} in {event.delay_s:.1f}s: {escape(event.reason)}[/yellow]")
        elif kind == "warning":
            self._end_text()
            c.print(f"[yellow]warning:[/yellow] {escape(event.message)}")
        elif kind == "ceiling":
            self._end_text()
            c.print(f"[yellow]■ {escape(event.message)}[/yellow]")
        elif kind == "compaction":
            c.print(f"[dim]context compacted: {event.tokens_before} → {event.tokens_after} tokens[/dim]")
        elif kind == "gate_result":
            self._end_text()
            if event.passed:
                c.print(f"[green]✓[/green] gate {escape(event.gate)}: {escape(event.detail)}")
            else:  # why it failed is said once, in the run's message on stderr (cli/driving.py)
                c.print(f"[red]✗[/red] gate {escape(event.gate)} failed")
                self._failed_gates.append((event.gate, event.detail))
        elif kind == "learning_pass_done":
            self._end_text()
            if event.error:
                c.print(f"[yellow]learning gate: failed closed, nothing applied ({escape(event.error)})[/yellow]")
            else:
                failed = f", {event.failed} failed" if event.failed else ""
                c.print(f"learning gate: {event.applied} applied, {event.rejected} rejected{failed}")
        elif kind == "approval_required":
            self._end_text()
            why = f" ({escape(event.reason)})" if event.reason else ""
            c.print(f"[yellow]⏸ {escape(event.name)} needs approval{why}:[/yellow] {escape(event.summary or event.name)}",
                    soft_wrap=True)
        elif kind == "done":
            self._end_text()
            told = " ".join((event.message or "").split())
            for gate, detail in self._failed_gates:  # a run that ended otherwise (cancelled) never told it
                if " ".join(detail.split()) not in told:
                    c.print(f"  [red]gate {escape(gate)}: {escape(detail)}[/red]")
            self._failed_gates.clear()
            colour = {"success": "green", "partial": "yellow", "paused": "yellow"}.get(event.verdict, "red")
            tokens = f"{event.input_tokens:,} in / {event.output_tokens:,} out tokens"
            c.print(
                f"[{colour}]{event.verdict}[/{colour}] · {counted(event.steps, 'step')} · {counted(event.tool_calls, 'tool call')} · "
                f"{tokens} · report {event.report_path}",
                soft_wrap=True,
            )
            changes = event.changes  # None: checkpoints are off; all empty: the run changed no file
            if changes and any(changes.values()):
                total = sum(len(paths) for paths in changes.values())
                parts = ", ".join(f"{len(changes[k])} {k}" for k in ("created", "modified", "deleted") if changes.get(k))
                c.print(f"[dim]changed {counted(total, 'file')} ({parts}) · `arreio diff` shows them · "
                        f"`arreio undo` takes them back[/dim]", soft_wrap=True)
            # Why a run did not succeed goes to stderr, one line (cli/driving.py), for people and scripts alike.

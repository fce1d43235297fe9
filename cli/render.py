"""Rendering run events: live for a person (rich), the final answer alone (`--output text`), or JSON
Lines for a machine. One stream, several views.

Where the output goes decides how it looks: a terminal gets rich's view at its width; a pipe or a
file gets plain lines at full width (no colour, no cursor movement, nothing cut at 80 columns). A
closed pipe (`arreio run … | head -1`) stops the printing, never the run: every view here turns a
`BrokenPipeError` into silence (the stream is pointed at /dev/null) and the driver keeps draining
the pipeline, so the run finishes and exits with its own code.
"""

from __future__ import annotations

import errno
import json
import os
import sys
from typing import Any, TextIO

from rich.console import Console

from arreio.cli.inert import call_text, flat, inert
from arreio.cli.inert import shown as escape  # markup-safe and inert
from arreio.engine.core.wording import NOTE_CODES, counted, instructions_note

_ARG_PREVIEW = 60
FULL_WIDTH = 1_000_000  # "as wide as the line is": rich wraps at the console's width, a pipe has none


def silence(stream: Any) -> None:
    """Point a stream whose reader went away at /dev/null, so later writes (and the interpreter's
    flush at exit) go nowhere instead of raising. In-memory streams (tests) have no descriptor."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


class _Console(Console):
    """rich's console, except that a closed pipe silences it: rich's default exits the process
    (SystemExit(1) mid-run), which cancelled the agent when a reader such as `head` left."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        silence(self.file)


def console_for(stream: TextIO | None = None) -> Console:
    """A console for `stream` (stdout by default): rich at a terminal, plain full-width lines elsewhere;
    a quiet one when nobody can read what it writes (a descriptor open for reading only: `1</dev/null`)."""
    stream = stream or sys.stdout
    if _read_only(stream):
        return _Console(file=stream, quiet=True)
    if isatty(stream):
        return _Console(file=stream, highlight=False, emoji=False)
    return _Console(file=stream, highlight=False, emoji=False, width=FULL_WIDTH)


def _read_only(stream: TextIO | None) -> bool:
    """Whether `stream`'s descriptor was opened for reading only (every write would fail: EBADF)."""
    try:
        import fcntl

        return fcntl.fcntl(stream.fileno(), fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY  # type: ignore[union-attr]
    except (AttributeError, OSError, ValueError, ImportError):
        return False


def money(cost: float | None) -> str:
    """US dollars the way the end line and `sessions list` show them; None is "cost unknown"."""
    if cost is None:
        return "cost unknown"
    if cost == 0:
        return "$0"
    if cost < 0.001:
        return "<$0.001"
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.3f}"


def cost_line(done: Any) -> str:
    """`$0.036 · 62% cached`, `cost unknown · 10% cached`, `$0 (offline)` (offline and replayed runs)."""
    if done.free:
        return f"$0 ({done.free_because or 'offline'})"
    cost = money(done.cost_usd)
    return cost if done.cache_share is None else f"{cost} · {round(done.cache_share * 100)}% cached"


def _format_args(arguments: dict[str, Any]) -> str:
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text = text.replace("\n", "⏎")
        if len(text) > _ARG_PREVIEW:
            text = text[:_ARG_PREVIEW] + f"… ({len(str(value))} chars)"
        parts.append(f"{key}={text!r}" if isinstance(value, str) else f"{key}={text}")
    return ", ".join(parts)


class _Plain:
    """Writes to a stream until its reader goes away, then stays silent."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        # None: the process started with that descriptor closed (`arreio run --json >&-`): silent from the start
        self.closed = self.out is None

    def _write(self, text: str) -> None:
        if self.closed:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            self.closed = True
            silence(self.out)
        except OSError as error:
            if error.errno != errno.EBADF:  # a full disk is an error to report; this is a closed stdout
                raise
            self.closed = True  # open for reading only (`1</dev/null`): nobody can read what is written


class JsonRenderer(_Plain):
    """One JSON object a line on stdout, `type` first; nothing else goes to stdout."""

    def __call__(self, event: Any) -> None:
        self._write(event.model_dump_json() + "\n")


class ResultRenderer(_Plain):
    """`--output json-result`: one JSON object on stdout when the run ends — the answer, how the run
    ended, the session to continue, what it cost — for scripts that want the result, not the stream."""

    def __call__(self, event: Any) -> None:
        if event.type != "done" or event.agent is not None:
            return
        import json

        result = {
            "type": "result",
            "verdict": event.verdict,
            "is_error": event.verdict != "success",
            "exit_code": event.exit_code,
            "result": final_answer(event),
            "message": event.message,
            "session_id": event.session_id,
            "steps": event.steps,
            "tool_calls": event.tool_calls,
            "usage": {"input_tokens": event.input_tokens, "output_tokens": event.output_tokens},
            "cost_usd": event.cost_usd,
            "free": event.free,
            "changes": event.changes,
            "report_path": event.report_path,
        }
        if event.final_json is not None:
            result["result_json"] = event.final_json
        self._write(json.dumps(result, ensure_ascii=False) + "\n")


def final_answer(done: Any) -> str:
    """The answer a run ended with: only a run that succeeded or stopped at a ceiling has one (a failed
    or paused run's `final_text` can be an earlier run's answer; stderr says how it ended). With
    `--output-schema` it is the valid JSON value (`final_json`), as JSON."""
    if done.verdict not in ("success", "partial"):
        return ""
    if getattr(done, "final_json", None) is not None:
        import json

        return json.dumps(done.final_json, ensure_ascii=False, indent=2)
    return done.final_text


def shown_answer(done: Any) -> str:
    """The final answer as a terminal or a pipe gets it: inert, like the live view (model text is
    untrusted: an OSC 52 in it would write the clipboard). A `--output-schema` value stays valid JSON:
    its encoder already escapes C0 controls, and when a character inert would still change is left
    (C1, DEL, bidi), the value is encoded ASCII-only instead, never with inert's `\\x9b`, which JSON
    has not. `--output-last-message` and `--json` are data and keep `final_answer` as it is."""
    text = final_answer(done)
    if text and getattr(done, "final_json", None) is not None:
        return text if inert(text) == text else json.dumps(done.final_json, ensure_ascii=True, indent=2)
    return inert(text)


class TextRenderer(_Plain):
    """`--output text`: the run's final answer, and nothing else, on stdout once the run ends."""

    def __call__(self, event: Any) -> None:
        if event.type == "done" and event.agent is None and (text := shown_answer(event)):
            self._write(text if text.endswith("\n") else text + "\n")


class _ChildView:
    """How a sub-agent's events read inside the parent's stream: indented, tagged, quieter."""

    def _child(self, agent: str, event: Any) -> None:
        c = self.console
        pad = "    " * agent.count(".") + "  "
        if event.type == "text_delta" and self.answer:
            # tagged and indented as its calls are: flush left it read as the parent's own words
            if not self._in_text or self._text_agent != agent:
                self._end_text()
                c.print(f"{pad}[cyan]↳ {escape(agent)}:[/cyan] ", end="", soft_wrap=True)
            c.print(f"[dim]{escape(event.text.replace(chr(10), chr(10) + pad + '    '))}[/dim]", end="", soft_wrap=True)
            self._in_text, self._text_agent = True, agent
        elif event.type == "tool_start":
            self._end_text()
            c.print(
                f"{pad}[cyan]↳ {escape(agent)}[/cyan] ● {escape(event.name)}({escape(_format_args(event.arguments))})"
            )
        elif event.type == "tool_end":
            style = "red" if event.is_error else "dim"
            c.print(f"{pad}    [{style}]{'✗' if event.is_error else '⎿'} {escape(event.preview)}[/{style}]")
        elif event.type in ("warning", "ceiling", "retry"):
            self._end_text()
            said = getattr(event, "message", "") or getattr(event, "reason", "")
            c.print(f"{pad}[yellow]↳ {escape(agent)}: {escape(flat(said))}[/yellow]")
        elif event.type == "model_switch":
            self._end_text()
            c.print(
                f"{pad}[yellow]↳ {escape(agent)}: model {escape(event.from_model)} → {escape(event.to_model)}[/yellow]"
            )
        elif event.type == "unit_end":
            self._end_text()
            c.print(f"{pad}[cyan]↳ {escape(agent)} {event.verdict}[/cyan]")


class LiveRenderer(_ChildView):
    """Streams the answer as it arrives and shows each tool call and its outcome. With
    `answer=False` it is the progress view of `--output text` (on stderr): everything but the
    streamed answer and reasoning, which go to stdout at the end instead."""

    def __init__(self, console: Console | None = None, *, answer: bool = True) -> None:
        self.console = console or console_for()
        self.answer = answer
        self._in_text = False
        self._text_agent: str | None = None  # the sub-agent whose text streams now (None: the parent's)
        self._failed_gates: list[tuple[str, str]] = []

    @property
    def at_line_start(self) -> bool:
        """No streamed text is waiting for its line to end (a spinner may show)."""
        return not self._in_text

    def _end_text(self) -> None:
        if self._in_text:
            self.console.print()
            self._in_text = False
        self._text_agent = None

    def __call__(self, event: Any) -> None:
        kind = event.type
        c = self.console
        agent = getattr(event, "agent", None)
        if agent:  # a sub-agent's event: shown nested under the parent's delegate call
            self._child(agent, event)
            return
        if kind == "run_start":
            how, note = ("resuming" if event.resumed else "session"), escape(instructions_note(event.instructions))
            chosen = f" ({escape(event.model_chosen)}; --offline for the offline model)" if event.model_chosen else ""
            c.print(f"[dim]arreio · {escape(event.model)}{chosen} · {how} {event.session_id}{note}[/dim]")
        elif kind == "unit_start" and event.unit_id != "main":
            self._end_text()
            c.print(f"[bold magenta]▸ unit {escape(event.unit_id)}[/bold magenta] [dim]{escape(event.goal)}[/dim]")
        elif kind == "unit_end":
            self._end_text()
        elif kind in ("text_delta", "thinking_delta") and not self.answer:
            return
        elif kind == "text_delta":
            if self._text_agent is not None:  # the parent speaks again after a sub-agent's text
                self._end_text()
            c.print(escape(event.text), end="", soft_wrap=True)
            self._in_text = True
        elif kind == "thinking_delta":
            c.print(f"[dim italic]{escape(event.text)}[/dim italic]", end="", soft_wrap=True)
            self._in_text = True
        elif kind == "tool_start":
            self._end_text()
            c.print(
                f"[bold cyan]●[/bold cyan] [bold]{escape(event.name)}[/bold]({escape(_format_args(event.arguments))})"
            )
        elif kind == "tool_end":
            style = "red" if event.is_error else "dim"
            mark = "✗" if event.is_error else "⎿"
            size = f" [{event.chars} chars]" if event.chars > len(event.preview) else ""
            c.print(f"  [{style}]{mark} {escape(event.preview)}{size}[/{style}]")
        elif kind == "retry":
            self._end_text()
            # a server's error text: one line, however many it had (a newline would start a line of its own)
            c.print(f"[yellow]↻ retry {event.attempt} in {event.delay_s:.1f}s: {escape(flat(event.reason))}[/yellow]")
            if event.withdraws_text:
                c.print(
                    "[yellow]  the reply above was cut off and is withdrawn; the retried reply follows whole[/yellow]"
                )
        elif kind == "model_switch":
            self._end_text()
            c.print(
                f"[yellow]⇄ model {escape(event.from_model)} → {escape(event.to_model)}: "
                f"{escape(flat(event.reason))}[/yellow]",
                soft_wrap=True,
            )
            if event.withdraws_text:
                c.print("[yellow]  the reply above is withdrawn; the new model's reply follows whole[/yellow]")
        elif kind == "warning":
            self._end_text()
            if event.code in NOTE_CODES:  # said for the record, nothing went wrong: not in a warning's colour
                c.print(f"[dim]note: {escape(flat(event.message))}[/dim]")
            else:
                c.print(f"[yellow]warning:[/yellow] {escape(flat(event.message))}")
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
                c.print(f"[yellow]learning gate: failed closed, nothing applied ({escape(flat(event.error))})[/yellow]")
            else:
                failed = f", {event.failed} failed" if event.failed else ""
                c.print(f"learning gate: {event.applied} applied, {event.rejected} rejected{failed}")
                from arreio.cli.lessons import lesson_line

                for lesson in event.lessons:  # which lesson, and where it went (or why not)
                    c.print(f"  {escape(lesson_line(lesson))}", soft_wrap=True)
        elif kind == "approval_required":
            self._end_text()
            why = f" ({escape(event.reason)})" if event.reason else ""
            c.print(
                f"[yellow]⏸ {escape(event.name)} needs approval{why}:[/yellow] "
                f"{call_text(event.summary or event.name, markup=True)}",
                soft_wrap=True,
            )
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
                f"[{colour}]{event.verdict}[/{colour}] · {counted(event.steps, 'step')} · "
                f"{counted(event.tool_calls, 'tool call')} · {tokens} · {cost_line(event)} · "
                f"report {event.report_path}",
                soft_wrap=True,
            )
            changes = event.changes  # None: checkpoints are off; all empty: the run changed no file
            if changes and any(changes.values()):
                total = sum(len(paths) for paths in changes.values())
                parts = ", ".join(
                    f"{len(changes[k])} {k}" for k in ("created", "modified", "deleted") if changes.get(k)
                )
                c.print(
                    f"[dim]changed {counted(total, 'file')} ({parts}) · `arreio diff` shows them · "
                    f"`arreio undo` takes them back[/dim]",
                    soft_wrap=True,
                )
            # Why a run did not succeed goes to stderr, one line (cli/driving.py), for people and scripts alike.

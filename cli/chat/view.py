"""How a chat turn reads: the live view's rendering of every event (tool calls collapsed with their
result lines, retries, compaction notices — `cli/render.py`, unchanged), the answer as rendered
Markdown at a terminal, and after each turn one line: steps · tool calls · tokens · cost · cache share.

The answer is rendered block by block as it streams: a block (a paragraph, a list, a fenced code
block) is printed for good once it is complete — at a blank line outside a code fence, or when the
text ends. Until then the block being written shows in a transient preview (rich's `Live`, only
that block, cropped to the screen), replaced by the final rendering when the block is done: the
text streams as it arrives, and what stays on the screen is rendered Markdown, each block once."""

from __future__ import annotations

import re
import time
from typing import Any

from arreio.cli.inert import inert
from arreio.cli.inert import shown as escape
from arreio.cli.render import LiveRenderer, money
from arreio.engine.core.wording import counted

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


def stats_line(done: Any, *, interrupted: int = 0) -> str:
    """`2 steps · 1 tool call · 1,234 tokens · $0.012 · 62% cached` (offline: `$0 (offline)`);
    `interrupted` calls (stopped by a cancel) are said among the calls: `2 tool calls (1 interrupted)`."""
    cost = f"$0 ({done.free_because or 'offline'})" if done.free else money(done.cost_usd)
    cache = f"{round((done.cache_share or 0) * 100)}% cached"
    tokens = done.input_tokens + done.output_tokens
    calls = counted(max(done.tool_calls, interrupted), "tool call") + (
        f" ({interrupted} interrupted)" if interrupted else ""
    )
    return f"{counted(done.steps, 'step')} · {calls} · {tokens:,} tokens · {cost} · {cache}"


def _cut(text: str) -> int:
    """Where the complete blocks of `text` end (0: none is complete yet): the last blank line that is
    not inside a fenced code block."""
    cut, inside, pos = 0, False, 0
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            inside = not inside
        pos += len(line)
        if not inside and not line.strip() and line.endswith("\n") and pos < len(text):
            cut = pos
    return cut


class ChatRenderer(LiveRenderer):
    """The live view for a chat: Markdown answers at a terminal, the stats line instead of the run's
    end line. `allowed(event)` tells an approval already granted for this chat (`a`), shown as such.
    `asked_with_call`: the approval's question says itself what would run (cli/chat/approval.py, when
    stdout is not the terminal), so the turn's '⏸ … needs approval' line is not written too: through
    `| tee` the person saw it twice, once from the pipe and once from the question."""

    def __init__(self, console: Any, *, markdown: bool, allowed: Any = None, asked_with_call: bool = False) -> None:
        super().__init__(console)
        self.markdown = markdown
        self.allowed = allowed or (lambda event: False)
        self.asked_with_call = asked_with_call
        self._buffer = ""
        self._live: Any = None  # the preview of the block being written (a terminal only)
        self._shown_at = 0.0
        self._running: dict[str, str] = {}  # call id → tool name: started, no result shown yet

    @property
    def at_line_start(self) -> bool:
        return super().at_line_start and not self._buffer

    @property
    def writing(self) -> bool:
        """Answer text is held back, with no preview showing it (the spinner may say so)."""
        return bool(self._buffer) and self._live is None

    @staticmethod
    def _markdown(text: str) -> Any:
        from rich.markdown import Markdown

        # Model text is untrusted: inert first; no hyperlinks (a link's target is not what it shows);
        # markup shown as text (rich drops HTML blocks, and `<tools>…</tools>` vanished whole).
        return Markdown(literal_markup(inert(text)), hyperlinks=False)

    def _draw(self, text: str) -> None:
        self._stop_preview()
        if text.strip():
            self.console.print(self._markdown(text))

    def _preview(self) -> None:
        """Show the block being written, at most every 50 ms (each refresh renders the block again)."""
        if not self.console.is_terminal or not self._buffer.strip():
            return
        now = time.monotonic()
        if self._live is not None and now - self._shown_at < 0.05:
            return
        self._shown_at = now
        if self._live is None:
            from rich.live import Live

            self._live = Live(
                self._markdown(self._buffer),
                console=self.console,
                transient=True,
                auto_refresh=False,
                vertical_overflow="crop",
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start(refresh=True)
        else:
            self._live.update(self._markdown(self._buffer), refresh=True)

    def _stop_preview(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()  # transient: the preview is erased, the cursor shown again

    def flush(self) -> None:
        """Print what is held back (and end the preview): before any other output, and when a turn ends."""
        text, self._buffer = self._buffer, ""
        self._draw(text)

    def __call__(self, event: Any) -> None:
        kind = event.type
        if kind == "approval_required" and self.asked_with_call and not self.allowed(event):
            self.flush()  # the question, on the terminal, says it (and the call's own line follows if it runs)
            return
        if getattr(event, "agent", None):
            self.flush()
            super().__call__(event)
            return
        if kind == "text_delta" and self.markdown:
            if self._text_agent is not None:  # a sub-agent's text line ends before the parent's answer
                self._end_text()
            self._buffer += event.text
            cut = _cut(self._buffer)
            if cut:
                done, self._buffer = self._buffer[:cut], self._buffer[cut:]
                self._draw(done)
            self._preview()
            return
        self.flush()
        if kind == "approval_required" and self.allowed(event):
            self._end_text()
            self.console.print(
                f"[dim]● {escape(event.name)} allowed for this chat: {escape(event.summary or event.name)}[/dim]",
                soft_wrap=True,
            )
            return
        if kind == "tool_start":
            self._running[event.call_id] = event.name
        elif kind == "tool_end":
            self._running.pop(event.call_id, None)
        if kind == "done":
            self._done(event)
            return
        super().__call__(event)

    def _done(self, event: Any) -> None:
        self._end_text()
        c = self.console
        for name in self._running.values():  # a cancel stopped it: its line had no result under it
            c.print(f"  [yellow]✗ {escape(name)}: interrupted, stopped with the turn[/yellow]", soft_wrap=True)
        interrupted, self._running = len(self._running), {}
        if event.verdict == "success":
            c.print(f"[dim]{escape(stats_line(event))}[/dim]", soft_wrap=True)
        elif event.verdict == "cancelled":  # one line: stopped, and what ran until then
            c.print(
                f"[yellow]interrupted[/yellow] [dim]· {escape(stats_line(event, interrupted=interrupted))}[/dim]",
                soft_wrap=True,
            )
        else:
            colour = "yellow" if event.verdict in ("partial", "paused", "cancelled") else "red"
            told = " ".join(inert(event.message).split()).removeprefix(f"{event.verdict}: ")
            why = f": {escape(told)}" if told and told != event.verdict else ""
            c.print(f"[{colour}]{event.verdict}{why}[/{colour}]", soft_wrap=True)
            c.print(f"[dim]{escape(stats_line(event))}[/dim]", soft_wrap=True)
        changes = event.changes
        if changes and any(changes.values()):
            total = sum(len(paths) for paths in changes.values())
            parts = ", ".join(f"{len(changes[k])} {k}" for k in ("created", "modified", "deleted") if changes.get(k))
            c.print(
                f"[dim]changed {counted(total, 'file')} ({parts}) · /diff shows them · /undo takes them back[/dim]",
                soft_wrap=True,
            )


_CODE = re.compile(r"(^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\2[ \t]*$|\Z)|`[^`\n]*`)", re.MULTILINE | re.DOTALL)


def literal_markup(text: str) -> str:
    """`text` with every `<` outside code written as an escaped `\\<`: CommonMark then shows tags as
    the text they are instead of treating them as HTML (which the terminal renderer drops)."""
    out, at = [], 0
    for match in _CODE.finditer(text):
        out.append(text[at : match.start()].replace("<", "\\<"))
        out.append(match.group(0))
        at = match.end()
    out.append(text[at:].replace("<", "\\<"))
    return "".join(out)

"""The spinner a person sees on a terminal's stderr while a run waits (the model, a tool), and what it
says it waits on after each event."""

from __future__ import annotations

import os
import threading
import time
from typing import Any, TextIO

from arreio.cli.inert import flat


def waiting_for(event: Any, *, answer_shown: bool) -> str | None:
    """What a person waits on after `event`, for the spinner; None when nothing should show (an
    approval question is about to be asked, the run is over, text is streaming)."""
    kind = event.type
    if kind == "tool_start":
        return f"running {event.name}"
    if kind in ("run_start", "unit_start", "tool_end", "retry", "model_switch", "compaction", "warning", "ceiling"):
        return "waiting for the model"
    if kind == "text_delta" and not answer_shown:
        return "writing the answer"
    if kind == "thinking_delta" and not answer_shown:
        return "thinking"
    return None


class Spinner:
    """A transient line on a terminal's stderr while nothing else shows: `⠹ waiting for the model · 4s`.

    A daemon thread draws it after a short pause (a fast step never flickers) and redraws it with
    the seconds waited; `clear()` erases it before anything else prints. The driver makes one only
    when stderr is a terminal and the output is not JSON."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, stream: TextIO, *, delay_s: float = 0.3, tick_s: float = 0.1) -> None:
        self.stream, self.delay_s, self.tick_s = stream, delay_s, tick_s
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._label: str | None = None
        self._since = 0.0
        self._drawn = False
        self._thread = threading.Thread(target=self._loop, name="arreio-spinner", daemon=True)
        self._thread.start()

    def wait(self, label: str | None) -> None:
        """Show `label` while waiting (None: show nothing). The same label keeps counting. It is drawn
        with the spinner's own escapes, so it is made flat first: a tool's name is the model's."""
        label = flat(label) if label is not None else None
        with self._lock:
            if label != self._label:
                self._erase()
                self._label, self._since = label, time.monotonic()

    def clear(self) -> None:
        with self._lock:
            self._label = None
            self._erase()

    def close(self) -> None:
        self.clear()
        self._stop.set()
        self._thread.join(timeout=1)

    def _loop(self) -> None:
        frame = 0
        while not self._stop.wait(self.tick_s):
            with self._lock:
                if self._label is None or (waited := time.monotonic() - self._since) < self.delay_s:
                    continue
                width = self._columns()
                line = f"{self.FRAMES[frame % len(self.FRAMES)]} {self._label} · {int(waited)}s"[: max(width - 1, 1)]
                frame += 1
                self._drawn = self._put(f"\r\x1b[2m{line}\x1b[0m\x1b[K")

    def _columns(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            return 80

    def _erase(self) -> None:
        if self._drawn:
            self._drawn = False
            self._put("\r\x1b[K")

    def _put(self, text: str) -> bool:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing
            self._label = None
            return False
        return True

"""Where what an MCP connection says goes: one log file per server (`<state>/logs/mcp-<server>.log`)
holds the server's stderr and the SDK's own log records about that connection; none of it reaches
the user's terminal.

Why the SDK's records need routing: the `mcp` package logs through the standard `logging` module
(loggers `mcp.*`, plus `client` and `server` for two of its modules). With no handler configured,
Python prints WARNING and above to stderr with a traceback — one for every non-JSON line a stdio
server prints to stdout, thousands for a chatty one. `route_sdk_logging()` puts one handler on those
loggers. A record made while a connection's tasks run (`bind()` sets a context variable that every
task the SDK starts inherits) is written, as one line, to that server's log; any other record is
handed to the root logger exactly as propagation would have done, so nothing else changes.

A server's stderr tail explains its failures ("its stderr ends: …"); the SDK's lines are marked
(`SDK_MARK`) and left out of that tail, because they are not what the server said.

Nothing reaches the file unredacted: a server that prints its `GITHUB_TOKEN` on stderr, or a stdout
line holding one, is written through the run's redactor like every other file arreio keeps. So the
server's stderr is not the file itself but a pipe (`errlog`), read on the hub's event loop as it
fills (`pump`) and passed through a stream guard (`DeltaGuard`, as a model's streamed text is): what
may be the start of a secret still arriving (a key printed in two writes, a private key's first
lines) waits for the rest, or for the server's end.
"""

from __future__ import annotations

import asyncio
import codecs
import contextvars
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import IO

from arreio.engine.core import events as ev
from arreio.engine.walls.delta_guard import DeltaGuard
from arreio.engine.walls.redact import Redactor

SDK_LOGGERS = ("mcp", "client", "server")
SDK_MARK = "[arreio: mcp sdk] "
_JUNK_PREFIX = "Failed to parse JSONRPC message"
_JUNK_LOGGED = 200  # non-MCP stdout lines written out per connection; the rest are only counted
_LINE_CHARS = 600
_TAIL_CHARS = 400

_CURRENT: contextvars.ContextVar[ServerLog | None] = contextvars.ContextVar("arreio_mcp_log", default=None)
_install_lock = threading.Lock()


class ServerLog:
    """One server's log file: the SDK's lines and, through `errlog`'s pipe, the server's stderr, each
    redacted by `redactor` before it is written; `junk` counts stdout lines that were not MCP."""

    def __init__(self, path: Path | None, *, fresh: bool = True, redactor: Redactor | None = None) -> None:
        self.path = path
        self.redactor = redactor if redactor is not None else Redactor()
        self._pipe: int | None = None  # the read end of the server's stderr (`errlog`)
        self._writer: IO[str] | None = None  # its write end, handed to the server process
        self._loop: asyncio.AbstractEventLoop | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._guard = DeltaGuard(self.redactor)  # holds what may be the start of a secret
        if path is None:  # no state folder (a library caller): keep the stream, lose it at close
            self.stream: IO[str] = tempfile.TemporaryFile("a+", encoding="utf-8")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            if fresh:  # one run's log, not every run's; a restarted server appends to its first life's
                path.write_text("", encoding="utf-8")
            self.stream = open(path, "a", encoding="utf-8")  # noqa: SIM115 — closed by close()
        self.junk = 0
        self._lock = threading.Lock()

    def sdk_line(self, text: str) -> None:
        with self._lock:
            if self.stream.closed:
                return
            self.stream.write(SDK_MARK + self.redactor.text(text[:_LINE_CHARS]) + "\n")
            self.stream.flush()

    def errlog(self) -> IO[str]:
        """A file for the server process's stderr (call on the hub's loop): the write end of a pipe
        whose read end `pump` empties into the log whenever it holds something."""
        read_end, write_end = os.pipe()
        os.set_blocking(read_end, False)
        self._pipe, self._writer = read_end, os.fdopen(write_end, "w", encoding="utf-8")
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(read_end, self.pump)
        return self._writer

    def pump(self, *, final: bool = False) -> None:
        """Move what the server wrote on stderr into the log, redacted; what may be the start of a
        secret waits, unless `final` (the server is gone, or the log closes)."""
        with self._lock:
            data, ended = self._read_pipe()
            text = self._decoder.decode(data, final=final or ended)
            out = self._guard.feed(ev.TextDelta(text=text)) if text else []
            if final or ended:
                out += self._guard.flush()
            written = "".join(event.text for event in out)
            if written and not self.stream.closed:
                self.stream.write(written)
                self.stream.flush()

    def _read_pipe(self) -> tuple[bytes, bool]:
        """All the pipe holds, and whether the server's side is closed (call under the lock)."""
        if self._pipe is None:
            return b"", False
        chunks = []
        while True:
            try:
                chunk = os.read(self._pipe, 65536)
            except BlockingIOError:
                return b"".join(chunks), False
            except OSError:
                chunk = b""
            if not chunk:
                self._stop_reading()
                return b"".join(chunks), True
            chunks.append(chunk)

    def _stop_reading(self) -> None:
        if self._pipe is None:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self._pipe)
        os.close(self._pipe)
        self._pipe = None

    def size(self) -> int:
        """The log's size once what the pipe holds is in it (a mark: a crash quotes only what follows)."""
        self.pump()
        try:
            return self.path.stat().st_size if self.path is not None else 0
        except OSError:
            return 0

    def tail(self, since: int = 0) -> str:
        """The server's last stderr lines from byte `since` on (older lines may be unrelated), one line.
        Asked when the server is gone: what the pipe holds is written first, whole."""
        self.pump(final=True)
        if self.path is None or not self.path.exists():
            return ""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(since)
                text = handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith(SDK_MARK)]
        return " | ".join(lines[-3:])[-_TAIL_CHARS:]

    def close(self) -> None:
        """Write what the pipe still holds, stop reading it, close the file (call on the hub's loop)."""
        self.pump(final=True)
        if self.junk > _JUNK_LOGGED:
            self.sdk_line(f"{self.junk - _JUNK_LOGGED} more non-MCP stdout line(s) were ignored without logging")
        with self._lock:
            self._stop_reading()
            if self._writer is not None and not self._writer.closed:
                self._writer.close()
            if not self.stream.closed:
                self.stream.close()


def bind(log: ServerLog) -> None:
    """Route the SDK's records from the current task (and every task it starts) to `log`."""
    _CURRENT.set(log)


class _SdkRouter(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        log = _CURRENT.get()
        if log is None:  # not about one of our connections: on to the root's handlers (or Python's
            logging.getLogger().callHandlers(record)  # last resort), as propagation would have done
            return
        try:
            message = record.getMessage()
            if message.startswith(_JUNK_PREFIX):
                log.junk += 1
                if log.junk <= _JUNK_LOGGED:
                    log.sdk_line(f"ignored a stdout line that is not MCP: {_junk_line(record)}")
                return
            if record.exc_info and record.exc_info[1] is not None:
                exc = record.exc_info[1]
                message += f": {type(exc).__name__}: {' '.join(str(exc).split())}"
            log.sdk_line(f"{record.levelname.lower()} {record.name}: {message}")
        except Exception:  # noqa: BLE001 — logging must never break a connection
            self.handleError(record)


def _junk_line(record: logging.LogRecord) -> str:
    """The line itself, from the parse error the SDK logged (pydantic keeps it as the error's input)."""
    exc = record.exc_info[1] if record.exc_info else None
    errors = getattr(exc, "errors", None)
    try:
        return repr(errors()[0]["input"]) if callable(errors) else repr(str(exc))
    except (IndexError, KeyError, TypeError):
        return repr(str(exc))


def route_sdk_logging() -> None:
    """Install the router once per process (idempotent); see the module docstring."""
    with _install_lock:
        for name in SDK_LOGGERS:
            logger = logging.getLogger(name)
            if not any(isinstance(h, _SdkRouter) for h in logger.handlers):
                logger.addHandler(_SdkRouter())
            logger.propagate = False  # the router hands on what is not ours; ours must not reach stderr

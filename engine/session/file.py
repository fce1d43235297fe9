"""The crash-safe JSONL session (DESIGN.md invariants 1-2, section 7).

`.arreio/sessions/<id>.jsonl`: line 1 is a header (`{"type":"header","version":1,...}`), then one line
per record: `{"type":"message",...}` (a `Message`), `{"type":"run",...}` markers that link runs to the
session, and any later line type, which is kept verbatim (as a dict) in `Session.extra`.

Appends are one whole line per write, flushed and fsynced; rewrites go through a temp file in the same
folder, fsync, `os.replace`. Loading tolerates a torn last line and bad lines in the middle, then heals
pairing; with `repair=True` the repaired file is written back so disk and memory agree.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from arreio.engine.atomic import write_atomic
from arreio.engine.errors import SessionError
from arreio.engine.governance.redact import Redactor
from arreio.engine.messages import Message, ToolCallPart
from arreio.engine.providers.base import SystemBlock
from arreio.engine.session.healing import (
    MESSAGE_LINE_PREFIX,
    Placed,
    Repair,
    awaiting_approval,
    heal,
    parse_object,
    remap_placed,
    scan_lines,
)

__all__ = ["CURRENT_VERSION", "Repair", "Session", "SessionHeader"]

CURRENT_VERSION = 1
_RUN_EVENTS = ("start", "end")


class SessionHeader(BaseModel):
    """Line 1 of a session. `system` is the frozen system prompt, so a resume sends the same prefix.
    A version newer than this arreio's is refused on load, so no field a later version added can be
    lost by a rewrite here; unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore")

    version: int = CURRENT_VERSION
    id: str
    created_at: str
    cwd: str
    model: str
    title: str = ""
    system: list[SystemBlock] = []
    script: str | None = None  # the `--script` it was started with: a resume plays on from it
    learn: bool = False  # started with `--learn`: its resumes end with the learning pass too
    plan: str | None = None  # the `--plan` it runs: a resume goes on from the unit where it stopped
    parent: str | None = None  # a sub-agent's session: its parent session's id
    agent: str | None = None  # a sub-agent's session: its name in the event stream ("d1", "d1.d2")


# -- migrations ---------------------------------------------------------------------------------
# `_MIGRATIONS[n]` turns one line's record (the header included: type "header") of format n into
# format n+1, one record in, one out. Registering v1 -> v2 here (and bumping CURRENT_VERSION) is all a
# format change needs. Lines that are not JSON objects pass through untouched (the loader reports them).
Migration = Callable[[dict[str, Any]], dict[str, Any]]
_MIGRATIONS: dict[int, Migration] = {}


def upgrade(path: Path, header: dict[str, Any], lines: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SessionError(f"{path}: session header has no valid format version")
    if version > CURRENT_VERSION:
        raise SessionError(
            f"{path}: session was made by a newer arreio (format version {version}; "
            f"this arreio reads up to {CURRENT_VERSION}) — upgrade arreio to open it"
        )
    steps = [_MIGRATIONS.get(v) for v in range(version, CURRENT_VERSION)]
    if None in steps:
        raise SessionError(f"{path}: unknown session format version {version}")
    if not steps:
        return header, lines
    records: list[dict[str, Any] | bytes] = [parse_object(line) or line for line in lines]
    for step in steps:
        header = {**step(header), "version": header["version"] + 1}
        records = [step(r) if isinstance(r, dict) else r for r in records]
    return header, [r if isinstance(r, bytes) else _json_line(r).rstrip(b"\n") for r in records]


# -- line encoding ------------------------------------------------------------------------------
def _json_line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _message_line(message: Message) -> bytes:
    return MESSAGE_LINE_PREFIX + message.model_dump_json().encode()[1:] + b"\n"


# Written only when set, so a header reads as it always has.
_OPTIONAL_HEADER_KEYS = ("script", "learn", "plan", "parent", "agent")


def _header_line(header: SessionHeader) -> bytes:
    data = {"type": "header", **header.model_dump(mode="json")}
    for key in _OPTIONAL_HEADER_KEYS:
        if data.get(key) in (None, False):
            data.pop(key, None)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class Session:
    """One session file, loaded. Keeps an append handle open between appends; `close()` it (or use
    `with`). A session opened with `repair=False` that needed repair refuses writes: its memory and
    its file differ."""

    def __init__(
        self,
        path: Path,
        header: SessionHeader,
        messages: list[Message],
        runs: list[dict[str, Any]],
        extra: list[dict[str, Any]],
        placed: Placed,
        *,
        writable: bool = True,
    ) -> None:
        self.path = path
        self.header = header
        self.messages = messages
        self.runs = runs
        self.extra = extra
        self._placed = placed  # (messages before it, record) for run markers and extras, in file order
        self._writable = writable
        self._handle: io.FileIO | None = None
        # fsync after every append (DESIGN.md invariant 2). Only benchmarks and throwaway sessions
        # turn it off (config `fsync: false`): the line still lands whole, but a power cut may lose it.
        self.durable = True
        # Secrets never reach the file (issue 9): the run's redactor, applied to every line written.
        self.redactor: Redactor | None = None

    @property
    def id(self) -> str:
        return self.header.id

    def last_text(self) -> str:
        """The newest assistant text (what a unit that ends now would answer)."""
        return next((m.text for m in reversed(self.messages) if m.role == "assistant" and m.text), "")

    def pending_calls(self) -> list[ToolCallPart]:
        """Calls of the last assistant message that have no result yet, in declared order (a round
        left waiting for an approval)."""
        answered: set[str] = set()
        for message in reversed(self.messages):
            if message.role == "tool" and message.tool_result_part is not None:
                answered.add(message.tool_result_part.call_id)
            elif message.role == "assistant":
                return [c for c in message.tool_calls if c.id not in answered]
            else:
                return []
        return []

    # -- construction -----------------------------------------------------------------------------
    @classmethod
    def create(cls, directory: Path, header: SessionHeader, *, redactor: Redactor | None = None) -> Session:
        """Start a new session file `<directory>/<id>.jsonl` holding only the header (its title
        comes from the goal: `redactor` keeps a secret there out of the file too)."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{header.id}.jsonl"
        if path.exists():
            raise SessionError(f"session '{header.id}' already exists at {path}")
        line = _header_line(header)
        write_atomic(path, redactor.bytes(line) if redactor is not None else line)
        session = cls(path, header, [], [], [], [])
        session.redactor = redactor
        return session

    @classmethod
    def open(cls, path: Path, *, repair: bool = True) -> tuple[Session, list[Repair]]:
        """Load a session: skip bad lines, drop a torn tail, heal pairing. With `repair=True`, any
        repair is written back (atomically) so later appends are safe; with `repair=False` nothing
        is written and the session is read-only when it needed repair."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise SessionError(f"no session file at {path}") from None
        except OSError as error:
            raise SessionError(f"cannot read session {path}: {error.strerror}") from None
        if not data or data.isspace():
            raise SessionError(f"{path}: session file is empty (not a session)")

        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline, as it should
        header = parse_header(path, lines[0] if lines else tail)
        body = lines[1:] if lines else []
        header_unterminated = not lines
        if header_unterminated:
            tail = b""  # the header itself is the unterminated last line
        migrated = header.get("version") != CURRENT_VERSION
        header, body = upgrade(path, header, body + [tail] if tail else body)
        if tail:
            tail = body.pop()
        try:
            session_header = SessionHeader.model_validate({k: v for k, v in header.items() if k != "type"})
        except ValidationError as error:
            raise SessionError(f"{path}: invalid session header ({error.error_count()} problems)") from None

        good_end = len(data) - len(tail)  # bytes that end on a clean line
        raw, runs, extra, placed, repairs = scan_lines(body, tail)
        if header_unterminated:
            repairs.append(Repair(kind="torn_tail", detail="header line had no newline; kept", line=1))

        messages, heal_repairs = heal(raw, keep_open=awaiting_approval(raw, extra))
        repairs.extend(heal_repairs)
        if heal_repairs:
            placed = remap_placed(placed, raw, messages)
        # An older file is written back in the current format before anything is appended to it.
        writable = repair or not (repairs or migrated)
        session = cls(path, session_header, messages, runs, extra, placed, writable=writable)
        if repair and (repairs or migrated):
            session._write_repaired(repairs, good_end, migrated)
        return session, repairs

    def _write_repaired(self, repairs: list[Repair], good_end: int, migrated: bool) -> None:
        kinds = {r.kind for r in repairs}
        if kinds == {"torn_tail"} and not migrated:
            # The common crash case: cut the partial line off (or end the last whole line) instead of
            # rewriting everything; either way the next append starts on a clean line.
            with open(self.path, "r+b") as handle:
                if any(r.detail.startswith("partial") for r in repairs):
                    handle.truncate(good_end)
                else:
                    handle.seek(0, os.SEEK_END)
                    handle.write(b"\n")
                handle.flush()
                os.fsync(handle.fileno())
            return
        if migrated or "bad_line_skipped" in kinds:
            # Keep the original next to the rewritten file: skipped lines (or the old format) may matter.
            backup = self.path.with_name(self.path.name + ".bak")
            write_atomic(backup, self.path.read_bytes())
        self._write_all()

    # -- writing ----------------------------------------------------------------------------------
    def append(self, message: Message) -> None:
        """Append one message as one whole line: write, flush, fsync."""
        self._write(_message_line(message))
        self.messages.append(message)

    def append_many(self, messages: list[Message]) -> None:
        """Append several messages with one write and one fsync (a tool round's results)."""
        if not messages:
            return
        self._write(b"".join(_message_line(m) for m in messages))
        self.messages.extend(messages)

    def mark_run(self, run_id: str, event: str, at: str, verdict: str | None = None) -> None:
        """Append a run marker (`event` is "start" or "end") linking a run to this session."""
        if event not in _RUN_EVENTS:
            raise ValueError(f"run marker event must be one of {_RUN_EVENTS}, not {event!r}")
        record: dict[str, Any] = {"type": "run", "run_id": run_id, "event": event, "at": at}
        if verdict is not None:
            record["verdict"] = verdict
        self._write(_json_line(record))
        self.runs.append(record)
        self._placed.append((len(self.messages), record))

    def append_record(self, record: dict[str, Any]) -> None:
        """Append a record of another type (an approval decision, a request record); it is loaded
        back into `extra`, in place."""
        if record.get("type") in ("header", "message", "run"):
            raise ValueError(f"append_record is for other record types, not {record.get('type')!r}")
        self._write(_json_line(record))
        self.extra.append(record)
        self._placed.append((len(self.messages), record))

    def rewrite(self, messages: list[Message]) -> None:
        """Replace the history (compaction, cleanup) atomically, keeping header, markers and extras
        placed after the surviving messages they followed."""
        self._require_writable()
        self._placed = remap_placed(self._placed, self.messages, messages)
        self.messages = list(messages)
        self._write_all()

    def _write_all(self) -> None:
        self.close()  # the handle points at the inode os.replace is about to retire
        by_position: dict[int, list[bytes]] = {}
        for after, record in self._placed:
            by_position.setdefault(min(after, len(self.messages)), []).append(_json_line(record))
        chunks = [_header_line(self.header), *by_position.get(0, [])]
        for index, message in enumerate(self.messages, start=1):
            chunks.append(_message_line(message))
            chunks.extend(by_position.get(index, []))
        data = b"".join(chunks)
        write_atomic(self.path, self.redactor.bytes(data) if self.redactor is not None else data)

    def _write(self, data: bytes) -> None:
        self._require_writable()
        if self.redactor is not None:
            data = self.redactor.bytes(data)
        if self._handle is None:
            # Unbuffered: each record goes down in one write(2) on an O_APPEND descriptor.
            self._handle = open(self.path, "ab", buffering=0)  # noqa: SIM115 - kept open between appends
            if self._handle.tell() > 0 and not _ends_with_newline(self.path):
                # Someone left a partial line: start ours on a fresh line so it stays whole.
                data = b"\n" + data
        try:
            view = memoryview(data)
            while view:  # a short write only happens for huge batches or a full disk
                view = view[self._handle.write(view) :]
            if self.durable:
                os.fsync(self._handle.fileno())
        except BaseException:
            # A failed write may have left part of a line: reopening checks the tail and starts clean.
            self.close()
            raise

    def _require_writable(self) -> None:
        if not self._writable:
            raise SessionError(f"session '{self.id}' was opened read-only and needs repair; open it with repair")

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def parse_header(path: Path, line: bytes) -> dict[str, Any]:
    record = parse_object(line)
    if record is None or record.get("type") != "header":
        raise SessionError(f"{path}: first line is not a session header (not a session, or damaged)")
    return record


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"

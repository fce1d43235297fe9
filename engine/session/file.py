"""The crash-safe JSONL session (docs/architecture.md invariants 1-2, section 7).

`.arreio/sessions/<id>.jsonl`: line 1 is a header (`{"type":"header","version":3,...}`), then one line
per record: `{"type":"message",...}` (a `Message`), `{"type":"run",...}` markers that link runs to the
session, `{"type":"prune",...}` lines (format 2: old results replaced by stubs, see `replace_results`),
and any later line type, which is kept verbatim (as a dict) in `Session.extra`.

Appends are one whole line per write, flushed and fsynced; rewrites go through a temp file in the same
folder, fsync, `os.replace`. Loading tolerates a torn last line and bad lines in the middle, then heals
pairing; with `repair=True` the repaired file is written back so disk and memory agree.

Messages are immutable once appended and redacted once, on the way in; the rare message whose line
the redactor changed keeps its stored form next to it (memory holds what the model saw, the file what
may be kept), so a request's digest is fed once per message, as the file stores it.
"""

from __future__ import annotations

import json
import os
import weakref
from pathlib import Path
from types import TracebackType
from typing import Any

from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.errors import SessionError
from arreio.engine.core.messages import Message, ToolCallPart, ToolResultPart
from arreio.engine.session.appender import Appender
from arreio.engine.session.digest import RollingDigest, escaped, escaped_line
from arreio.engine.session.format import (
    _MIGRATIONS,  # noqa: F401 - tests register a migration here
    CURRENT_VERSION,
    SessionHeader,
    header_line,
    json_bytes,
    json_line,
    json_of_line,
    message_line,
    prune_record,
)
from arreio.engine.session.healing import PRUNE, Placed, Repair, apply_prune, remap_placed
from arreio.engine.session.reading import read_session
from arreio.engine.session.records import RecordLines, freeze
from arreio.engine.walls.redact import Redactor

__all__ = ["CURRENT_VERSION", "Repair", "Session", "SessionHeader"]

_RUN_EVENTS = ("start", "end")


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
        self._appender = Appender(path)  # fsync after every append unless told (appender.py)
        # Secrets never reach the file: the run's redactor, applied to every line written.
        self.redactor: Redactor | None = None
        # id -> (message, its line as stored; None: the message's own JSON, redaction changed nothing)
        self._forms: dict[int, tuple[Message, bytes | None]] = {}
        self._header_lines: tuple[bytes, bytes, Any] | None = None  # (header line, as redacted, by which redactor)
        self._records = RecordLines()
        # Bumped whenever messages change other than by an append (a rewrite, a prune): caches keyed
        # on the history (token sums, digests) start over when it moves.
        self.revision = 0
        self._changes: list[tuple[int, int]] = []  # (revision, first message index it changed)
        self.version = header.version  # the format of the file on disk (a v1 file stays v1 until it must not)
        # Through a weak reference: a session must not sit in a reference cycle, so that it (and a
        # long history, frozen out of the collector's walks on load) is freed by refcounting alone.
        digest_form = weakref.WeakMethod(self._digest_form)
        self._digest = RollingDigest(lambda message: digest_form()(message))  # type: ignore[misc]

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
    def create(
        cls, directory: Path, header: SessionHeader, *, redactor: Redactor | None = None, durable: bool = True
    ) -> Session:
        """Start a new session file `<directory>/<id>.jsonl` holding only the header (its title
        comes from the goal: `redactor` keeps a secret there out of the file too). `durable=False`:
        config `fsync: false` (nothing this session writes is fsynced)."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{header.id}.jsonl"
        if path.exists():
            raise SessionError(f"session '{header.id}' already exists at {path}")
        line = header_line(header)
        write_atomic(path, redactor.bytes(line) if redactor is not None else line, durable=durable)
        session = cls(path, header, [], [], [], [])
        session.redactor, session.durable = redactor, durable
        return session

    @classmethod
    def open(cls, path: Path, *, repair: bool = True, redactor: Redactor | None = None) -> tuple[Session, list[Repair]]:
        """Load a session: skip bad lines, drop a torn tail, heal pairing; `repair=True` writes repairs back
        (atomically; `repair=False`: read-only if it needed one). `redactor`: the writer's, from the first write."""
        read = read_session(path)
        # An older file is written back in the current format before anything is appended to it.
        writable = repair or not (read.repairs or read.migrated)
        session = cls(path, read.header, read.messages, read.runs, read.extra, read.placed, writable=writable)
        session.redactor = redactor
        if repair and (read.repairs or read.migrated):
            session._write_repaired(read.repairs, read.good_end, read.migrated)
        return session, read.repairs

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
            write_atomic(backup, self.path.read_bytes(), durable=self.durable)
        self._write_all()

    # -- writing ----------------------------------------------------------------------------------
    def _stored(self, message: Message) -> tuple[Message, bytes]:
        """The message and its line as the file holds it: redacted once, on the way in."""
        line = message_line(message)
        if self.redactor is None:
            return message, line
        clean = line if _result_scanned(message, self.redactor) else self.redactor.bytes(line)
        # The line is kept: a compaction archives it and the rewrite writes it again, without
        # serialising the message a second time.
        self._forms[id(message)] = (message, clean)
        return message, clean

    def _digest_form(self, message: Message) -> bytes:
        """The message as the request digest takes it: its stored JSON, escaped (`digest.escaped`)."""
        form = self._forms.get(id(message))
        if form is None or form[0] is not message:
            return escaped(message.model_dump_json())  # loaded from the file: stored as it is
        return escaped_line(self.stored_line(message))

    def stored_jsonl(self, messages: list[Message]) -> bytes:
        """The messages' JSON as stored, one a line (a compaction's archive of the head)."""
        return b"".join([json_bytes(self.stored_line(m)) + b"\n" for m in messages])

    def stored_line(self, message: Message) -> bytes:
        """The message's line with its secrets hidden: as stored, for a message that went through this
        session (redacted once, on its way in); any other is redacted now (and remembered)."""
        form = self._forms.get(id(message))
        if form is None or form[0] is not message:
            return self._stored(message)[1]  # never stored in this process (none kept without a redactor)
        if form[1] is None:  # a stub found clean in its prune line: serialised once, when first asked
            form = self._forms[id(message)] = (message, message_line(message))
        return form[1]

    def redacted_json(self, message: Message) -> str:
        """`stored_line`'s JSON (what a compaction archives, what a rewrite writes)."""
        return json_of_line(self.stored_line(message))

    def append(self, message: Message, *, sync: bool | None = None) -> None:
        """Append one message as one whole line: write, flush, fsync. A tool result is not fsynced
        on its own (`sync=None`: synced unless it is a tool result): the next reply's fsync covers it."""
        stored, line = self._stored(message)
        self._write(line, redact=False, sync=message.role != "tool" if sync is None else sync)
        self.messages.append(stored)

    def append_many(self, messages: list[Message], *, sync: bool | None = None) -> None:
        """Append several messages with one write and at most one fsync (a tool round's results)."""
        if not messages:
            return
        pairs = [self._stored(m) for m in messages]
        wanted = any(m.role != "tool" for m in messages) if sync is None else sync
        self._write(b"".join(line for _, line in pairs), redact=False, sync=wanted)
        self.messages.extend(stored for stored, _ in pairs)

    def _changed(self, index: int) -> None:
        self.revision += 1
        self._changes.append((self.revision, index))
        del self._changes[:-256]  # a reader further behind than this starts over
        self._digest.rewind(index)

    def unchanged_prefix(self, revision: int) -> int:
        """How many leading messages are the same objects as at `revision` (appends aside): all of
        them when nothing changed since, else up to the first message a later prune or rewrite
        touched (0 when that is too long ago to tell)."""
        if revision == self.revision:
            return len(self.messages)
        if not self._changes or self._changes[0][0] > revision + 1:
            return 0
        first = len(self.messages)
        for rev, index in reversed(self._changes):
            if rev <= revision:
                break
            first = min(first, index)
        return first

    def messages_digest(self, messages: list[Message]) -> str | None:
        """The request digest of `messages` when they are this session's history as it stands (the
        usual case: a request just assembled from it), kept incrementally; None otherwise."""
        own = self.messages
        if len(messages) != len(own) or (own and (messages[-1] is not own[-1] or messages[0] is not own[0])):
            return None
        return self._digest.digest(own)

    def replace_results(self, stubs: dict[int, str]) -> None:
        """Replace the content of old tool results (pruning: `index` → stub text) by appending one
        `prune` line, not by rewriting the file; the loader applies it again. A format-1 file is
        rewritten once, as format 2, instead (an older arreio must not misread the line)."""
        self._require_writable()
        if not stubs:
            return
        record = prune_record(self.messages, stubs)
        line = json_line(record)
        stored: dict[str, Any] | None = None
        if self.redactor is not None:
            clean = self.redactor.bytes(line)
            if clean is not line:
                line, stored = clean, json.loads(clean)
        apply_prune(self.messages, record)
        kept_results = record["results"] if stored is None else stored["results"]
        for raw, kept in zip(record["results"], kept_results, strict=True):
            message = self.messages[raw["at"]]
            if kept["content"] == raw["content"]:
                # The stub was scanned in this line, clean: its message needs no scan of its own later
                # (a compaction archives it).
                self._forms[id(message)] = (message, None)
            else:  # the stub as stored differs: keep that form for the digest
                copy = [message.model_copy()]
                apply_prune(copy, {"type": PRUNE, "results": [{**kept, "at": 0}]})
                self._forms[id(message)] = (message, message_line(copy[0]))
        self._changed(min(stubs))
        if self.version < CURRENT_VERSION:
            self._write_all()
        else:
            self._write(line, redact=False, sync=True)

    def mark_run(self, run_id: str, event: str, at: str, verdict: str | None = None) -> None:
        """Append a run marker (`event` is "start" or "end") linking a run to this session."""
        if event not in _RUN_EVENTS:
            raise ValueError(f"run marker event must be one of {_RUN_EVENTS}, not {event!r}")
        record: dict[str, Any] = {"type": "run", "run_id": run_id, "event": event, "at": at}
        if verdict is not None:
            record["verdict"] = verdict
        self._write(json_line(record))
        self.runs.append(record)
        self._placed.append((len(self.messages), record))

    def append_record(self, record: dict[str, Any], *, sync: bool = True, redacted_by: Redactor | None = None) -> None:
        """Append a record of another type (an approval decision, a request record); it is loaded
        back into `extra`, in place, as a frozen copy (`records.freeze`: the dict passed in is not kept,
        and what `extra` holds cannot change). `sync=False`: the next synced write makes it durable (a request
        record, which the reply appended right after it covers). `redacted_by`: the caller redacted
        every value that may hold a secret with that redactor (the rest are the harness's own), so
        the line is not scanned again when it is this session's."""
        if record.get("type") in ("header", "message", "run", PRUNE):
            raise ValueError(f"append_record is for other record types, not {record.get('type')!r}")
        record = freeze(record)  # what `extra` holds is what the line says, for good (records.py)
        scanned = redacted_by is not None and redacted_by is self.redactor
        self._write(self._records.line(record, self.redactor, scanned=scanned), redact=False, sync=sync)
        self.extra.append(record)
        self._placed.append((len(self.messages), record))

    def rewrite(self, messages: list[Message]) -> None:
        """Replace the history (compaction, cleanup) atomically, keeping header, markers and extras
        placed after the surviving messages they followed."""
        self._require_writable()
        self._placed = remap_placed(self._placed, self.messages, messages)
        held = {id(m) for m in self.messages}  # compaction keeps a tail of them: already redacted
        for message in messages:
            if id(message) not in held:
                self._stored(message)
        self.messages = list(messages)
        alive = {id(m) for m in self.messages}
        self._forms = {k: v for k, v in self._forms.items() if k in alive}
        self._digest.keep_only(alive)
        self._changed(0)
        self._write_all()

    def _write_all(self) -> None:
        self.close()  # the handle points at the inode os.replace is about to retire
        self.header.version = self.version = CURRENT_VERSION  # a rewritten file is in the current format
        by_position: dict[int, list[bytes]] = {}
        for after, record in self._placed:
            by_position.setdefault(min(after, len(self.messages)), []).append(self._records.line(record, self.redactor))
        head = header_line(self.header)  # redacted per line, as appends are
        if self.redactor is not None:
            # The header holds the whole system prompt: scanned again only when it changed.
            known = self._header_lines
            clean = (
                known[1]
                if known is not None and known[0] == head and known[2] is self.redactor
                else self.redactor.bytes(head)
            )
            self._header_lines, head = (head, clean, self.redactor), clean
        chunks = [head, *by_position.get(0, [])]
        for index, message in enumerate(self.messages, start=1):
            # redacted once: on its way in, or here the first time
            chunks.append(self.stored_line(message))
            chunks.extend(by_position.get(index, []))
        write_atomic(self.path, b"".join(chunks), durable=self.durable)

    def _write(self, data: bytes, *, redact: bool = True, sync: bool = True) -> None:
        self._require_writable()
        if redact and self.redactor is not None:
            data = self.redactor.bytes(data)
        self._appender.write(data, sync=sync)

    def _require_writable(self) -> None:
        if not self._writable:
            raise SessionError(f"session '{self.id}' was opened read-only and needs repair; open it with repair")

    @property
    def durable(self) -> bool:
        """Whether writes are fsynced (config `fsync`; appender.py)."""
        return self._appender.durable

    @durable.setter
    def durable(self, value: bool) -> None:
        self._appender.durable = value

    def sync(self) -> None:
        """Make every write so far durable (one fsync, only when one is owed)."""
        self._appender.sync()

    def close(self) -> None:
        self._appender.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def _result_scanned(message: Message, redactor: Any) -> bool:
    """A tool result whose content this redactor already found clean, as it entered the history
    (`RedactResults`): its line needs no second scan (a 2 KB result was scanned twice a
    turn, ~70 µs each). The line holds nothing else free-form but the call's id and the tool's name,
    which are checked here (short: one pass of the pattern). Escaping the text as JSON adds no secret
    the text lacked: every form of an environment secret is found in the raw text, and a format token
    is made of characters JSON leaves as they are."""
    if message.role != "tool" or len(message.parts) != 1:
        return False
    part = message.parts[0]
    return (
        isinstance(part, ToolResultPart)
        and not part.images
        and redactor.known_clean(part.content)
        and redactor.text(part.call_id) == part.call_id
        and redactor.text(part.name) == part.name
    )

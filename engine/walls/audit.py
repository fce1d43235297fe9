"""The audit journal: `.arreio/audit.jsonl`, append-only and hash-chained (docs/architecture.md section 7).

One JSON line per entry:
`{"v":1,"seq":7,"at":"2026-06-27T16:00:00.000Z","kind":"tool_call","payload":{…},"prev":"<hex>","hash":"<hex>"}`
where `hash = sha256(prev + canonical JSON of {v, seq, at, kind, payload})` and `prev` is the hash of
the entry before it (64 zeros for the first). Editing an entry breaks its own hash; deleting or
inserting one breaks the next entry's `prev`. A chain alone cannot see its tail cut off, so every run
report records the journal's head when the run ended (`audit_head`); `verify` checks those anchors.

Appends hold an exclusive `flock` while they read the last hash and write one whole line, then
fsync — so two runs in one folder never fork the chain. Payloads go through the redactor first.
`durable=False` (config `fsync: false`, like the session) skips the fsync: the line still lands whole.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
from dataclasses import dataclass
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from arreio.engine.core.errors import UsageError
from arreio.engine.core.ids import iso_ms
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.ports import Clock, SystemClock
from arreio.engine.core.regular_file import Limit, NotRegularFile, read_bytes, size_text
from arreio.engine.core.regular_file import kind as file_kind
from arreio.engine.core.wording import counted
from arreio.engine.walls.redact import Redactor

FORMAT_VERSION = 1
GENESIS = "0" * 64
FILE_NAME = "audit.jsonl"
_TAIL_CHUNK = 65536
_MAX_ENTRY = 1024 * 1024  # longer lines are not entries: ours hold digests and short payloads
_TAIL_LIMIT = 16 * 1024 * 1024  # how far back an append looks for the entry it chains onto


def canonical(value: Any) -> str:
    """The one JSON spelling hashed and digested: sorted keys, no spaces, UTF-8 kept."""
    if c_make_encoder is None:  # an interpreter without the C accelerator
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    # What `json.dumps` with these options runs, without building a JSONEncoder for every call
    # (five a turn): the same output, a fresh circular-reference guard each time.
    return "".join(c_make_encoder({}, str, encode_basestring, None, ":", ",", True, False, True)(value, 0))


def digest(value: Any) -> str:
    """A short stable digest of a JSON-like value (a tool call's arguments)."""
    return "sha256:" + hashlib.sha256(canonical(value).encode()).hexdigest()[:16]


def entry_hash(prev: str, body: dict[str, Any]) -> str:
    return hashlib.sha256((prev + canonical(body)).encode()).hexdigest()


@dataclass
class Verification:
    """`ok`, how many entries were read, and for a broken chain the first bad entry (1-based line)."""

    ok: bool
    entries: int
    broken_line: int | None = None
    reason: str = ""


class AuditJournal:
    """`AuditJournal(state_dir, clock, redactor=run.redactor).append(kind, payload)` — the API every
    layer calls. The redactor is required: a writer must say whose secrets it hides (the run's one
    redactor); `redactor=None` opens the journal for reading only."""

    def __init__(self, state_dir: Path, clock: Clock | None = None, *, redactor: Redactor | None) -> None:
        self.path = state_dir / FILE_NAME
        self.clock = clock or SystemClock()
        self.redactor = redactor
        self.durable = True  # fsync each entry (config `fsync: false` turns it off, as for the session)
        self._mine: tuple[tuple[int, int, int], dict[str, Any]] | None = None  # (file, size) after our append

    def append(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Append one entry and return it. Secrets in the payload are redacted first."""

        if self.redactor is None:
            raise RuntimeError("this audit journal was opened for reading (no redactor): it cannot append")

        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:  # the first entry: make the folder (not asked every time: a stat per entry)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            info = os.fstat(fd)
            if (found := file_kind(info.st_mode)) is not None:  # a FIFO would take 64 KB, then block the run for good
                raise NotRegularFile(found)
            mine = self._mine
            # The file is as our last append left it (same inode and size, under the lock): its last
            # entry is the one we wrote, so it need not be read and parsed back. Any other
            # writer (another process) changes the size, and then the tail is read as always.
            fresh = mine is not None and mine[0] == (info.st_dev, info.st_ino, info.st_size)
            last = mine[1] if fresh else _last_entry(fd)
            body = {
                "v": FORMAT_VERSION,
                "seq": (last.get("seq", 0) + 1) if last else 1,
                "at": iso_ms(self.clock.now()),
                "kind": kind,
                "payload": self.redactor.value(payload),
            }
            prev = last.get("hash", GENESIS) if last else GENESIS
            entry = {**body, "prev": prev, "hash": entry_hash(prev, body)}
            line = (canonical(entry) + "\n").encode()
            if not fresh and info.st_size and not _ends_with_newline(fd):
                line = b"\n" + line  # a torn line stays torn (verify names it); ours starts clean
            written = os.write(fd, line)
            if self.durable:
                os.fsync(fd)
            whole = written == len(line)
            self._mine = ((info.st_dev, info.st_ino, info.st_size + written), entry) if whole else None
            return entry
        finally:
            os.close(fd)  # closing releases the lock

    def entries(self) -> list[dict[str, Any]]:
        """Every readable entry, in order (unreadable lines skipped; `verify` reports them)."""
        if not self.path.exists():
            return []
        out = []
        for line in self._read().split(b"\n"):
            try:
                record = json_loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                out.append(record)
        return out

    def _read(self) -> bytes:
        """The whole journal; a journal that is not a regular file, or is past `Limit.JOURNAL`, is a
        UsageError saying so (it is not waited on, nor read until the memory runs out)."""
        try:
            return read_bytes(self.path, limit=Limit.JOURNAL)
        except FileNotFoundError:
            return b""
        except OSError as error:
            raise UsageError(f"cannot read the audit journal {self.path}: {error.strerror or error}") from None

    def tail(self, n: int = 20, run_id: str | None = None) -> list[dict[str, Any]]:
        """The last `n` entries (of `run_id`), those that are entries at all (`verify` names the rest)."""
        rows = [r for r in self.entries() if _is_entry(r)]
        if run_id:
            rows = [r for r in rows if str((r.get("payload") or {}).get("run_id", "")).startswith(run_id)]
        return rows[-n:] if n > 0 else rows

    def verify(self, anchors: list[tuple[str, int, str]] = ()) -> Verification:
        """Walk the chain; the first entry whose hash, link or sequence is wrong is reported. `anchors`
        are (where, seq, hash) heads recorded elsewhere (run reports): each must still be in the chain."""
        result = self._walk()
        if not result.ok:
            return result
        hashes = {r.get("seq"): r.get("hash") for r in self.entries()}
        for where, seq, digest_ in anchors:
            if seq not in hashes and not self.path.exists():
                return Verification(False, 0, 1, f"the journal file is gone, and {where} recorded entry {seq}")
            if seq not in hashes:
                return Verification(
                    False,
                    result.entries,
                    result.entries + 1,
                    f"{where} recorded entry {seq}, but the journal ends at entry {result.entries}: "
                    "entries were removed from its end",
                )
            if hashes[seq] != digest_:  # the entries before it are a chain of their own, and check out
                return Verification(False, seq - 1, seq, f"entry {seq} is not the one {where} recorded")
        return result

    def _walk(self) -> Verification:
        if not self.path.exists():
            return Verification(True, 0)
        data = self._read()
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        prev, seq = GENESIS, 0
        # A line that is not JSON (a write a crash cut short) is not part of the chain: the next
        # append chains onto the last whole entry (`_last_entry`). It is reported, but the walk goes
        # on past it, so a crash does not hide an entry changed or deleted later on.
        unreadable: tuple[int, int, str] | None = None  # (line, entries before it, why)
        for number, line in enumerate(lines, start=1):
            try:
                record = json_loads(line)
            except ValueError:
                if unreadable is None:
                    torn = number == len(lines) and not data.endswith(b"\n")
                    why = "last line is cut short (a write was interrupted)" if torn else "line is not valid JSON"
                    unreadable = (number, seq, why)
                continue
            if not _is_entry(record):
                return Verification(False, seq, number, "line is not an audit entry")
            body = {k: record.get(k) for k in ("v", "seq", "at", "kind", "payload")}
            if entry_hash(record["prev"], body) != record["hash"]:
                return Verification(False, seq, number, f"entry {record['seq']} was changed after it was written")
            if record["prev"] != prev:
                return Verification(
                    False,
                    seq,
                    number,
                    f"entry {record['seq']} does not follow the entry before it (an entry was deleted or inserted)",
                )
            if record["seq"] != seq + 1:
                return Verification(
                    False, seq, number, f"entry {record['seq']} follows entry {seq}: entries are missing"
                )
            prev, seq = record["hash"], record["seq"]
        if unreadable is not None:
            number, before, why = unreadable
            after = f"; the {counted(seq - before, 'entry', 'entries')} after it check out" if seq > before else ""
            return Verification(False, before, number, why + after)
        return Verification(True, seq)


def _is_entry(record: Any) -> bool:
    """The fields the chain is checked on, with their types: a tampered `"prev": 5` is reported, not
    a crash of the command that exists to report it."""
    return (
        isinstance(record, dict)
        and {"seq", "hash", "prev", "kind"} <= record.keys()
        and isinstance(record["seq"], int)
        and not isinstance(record["seq"], bool)
        and isinstance(record["hash"], str)
        and isinstance(record["prev"], str)
        and isinstance(record["kind"], str)
        and isinstance(record.get("payload", {}), dict | None)
    )


def _ends_with_newline(fd: int) -> bool:
    return os.pread(fd, 1, os.fstat(fd).st_size - 1) == b"\n"


def _last_entry(fd: int) -> dict[str, Any] | None:
    """The last whole entry, read backwards from the end (no full scan per append). An entry is a
    short line: a longer one is passed over unread, and when the last `_TAIL_LIMIT` bytes hold no
    entry (a file of NULs, a 2 GB sparse file), the append is refused rather than the whole file
    read back, byte by byte, or a new chain begun at entry 1."""
    size = os.fstat(fd).st_size
    offset, carry, long_line = size, b"", False
    while offset > 0:
        if size - offset >= _TAIL_LIMIT:
            raise OSError(errno.EINVAL, f"no whole entry in the last {size_text(_TAIL_LIMIT)} of the journal")
        start = max(0, offset - _TAIL_CHUNK)
        lines = (os.pread(fd, offset - start, start) + carry).split(b"\n")
        offset = start
        carry = lines.pop(0) if offset else b""  # it may go on in the chunk before
        for line in reversed(lines):
            if long_line:  # the rest of a line passed over
                long_line = False
                continue
            if not line.strip():
                continue
            try:
                record = json_loads(line)
            except ValueError:
                continue  # a torn tail: chain onto the last whole entry
            if isinstance(record, dict) and "hash" in record:
                return record
        if len(carry) > _MAX_ENTRY:
            carry, long_line = b"", True
    return None

"""Full-text search over saved sessions (`arreio sessions search`): an SQLite FTS5 index kept beside
them (`.arreio/search.sqlite`), brought up to date before every search.

The index is a cache of the session files and nothing else: missing, damaged or of another version,
it is rebuilt from them. Each file is indexed once and then only from where the last indexing
stopped (sessions are append-only; a rewrite — compaction, a repair — replaces the file, and a file
that is not the one indexed, or shorter, or whose indexed bytes changed, is indexed afresh). Only
whole lines are indexed: a line still being written is read next time.

Text is split into lines and each line is a row, so a hit is the line that matched. The trigram
tokenizer (SQLite ≥ 3.34) finds any substring of three characters or more, in any script: Japanese
and Chinese have no spaces for a word tokenizer to split on. Shorter terms (a two-kanji word) are
matched with LIKE over the same rows.

Files are read defensively: a line too long to index whole is skipped, a line that is not JSON or
not a message is passed over, a file whose first line is not a session header is not indexed — a
search never fails on what one session holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["INDEX_VERSION", "MAX_LINE_BYTES", "Hit", "SessionIndex", "excerpt"]

INDEX_VERSION = 1
MAX_LINE_BYTES = 8 << 20  # a session line longer than this (a giant tool result) is not indexed
MAX_ROW_CHARS = 4000  # one text line longer than this is indexed by its start
ROLES = ("user", "assistant", "tool")
_SIG_BYTES = 256  # the indexed bytes' last stretch, checked before an incremental read

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (
    session_id TEXT PRIMARY KEY, inode INTEGER, size INTEGER, mtime_ns INTEGER, offset INTEGER,
    sig TEXT, at TEXT, cwd TEXT, title TEXT, usable INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS lines USING fts5(
    text, session_id UNINDEXED, role UNINDEXED, at UNINDEXED, tokenize='trigram');
"""


@dataclass(frozen=True)
class Hit:
    """One matching line: the session, when it was said (the run step before it; the session's
    creation time before any), who said it, and the line."""

    session_id: str
    at: str
    role: str
    line: str
    title: str
    cwd: str


class SessionIndex:
    """The index at `path` over the session files in `sessions`. `refresh()` brings it up to date;
    `search()` refreshes first. A state folder that cannot be written gets an index in memory."""

    def __init__(self, path: Path, sessions: Path) -> None:
        self.path, self.sessions = path, sessions
        self.db = self._connect()

    # -- the database -----------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        try:
            db = self._open(self.path)
        except sqlite3.DatabaseError:  # not a database, or damaged: a cache, so it starts over
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(f"{self.path}{suffix}")
                except OSError:
                    pass
            try:
                db = self._open(self.path)
            except sqlite3.DatabaseError:
                db = self._open(None)
        return db

    def _open(self, path: Path | None) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(str(path) if path is not None else ":memory:", timeout=30, isolation_level=None)
        except sqlite3.OperationalError:  # the folder cannot be written: search from memory
            return self._open(None) if path is not None else _unusable()
        try:
            db.execute("PRAGMA journal_mode=WAL") if path is not None else None
            version = _meta(db, "version")
            if version is not None and version != str(INDEX_VERSION):
                db.executescript("DROP TABLE IF EXISTS lines; DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS meta;")
            db.executescript(_SCHEMA)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (str(INDEX_VERSION),))
        except sqlite3.OperationalError as error:
            db.close()
            if "fts5" in str(error).lower() or "tokenizer" in str(error).lower():
                raise RuntimeError(
                    f"session search needs SQLite 3.34 or newer with FTS5 (this Python has {sqlite3.sqlite_version})"
                ) from None
            if path is None:
                raise
            return self._open(None)  # read-only folder or file: the index lives in memory this time
        return db

    def close(self) -> None:
        self.db.close()

    # -- keeping it up to date --------------------------------------------------------------------
    def refresh(self) -> int:
        """Index what changed since the last refresh; returns how many files were (re)indexed."""
        known = {row[0]: row[1:] for row in self.db.execute("SELECT session_id, inode, size, mtime_ns FROM files")}
        on_disk: dict[str, os.stat_result] = {}
        if self.sessions.is_dir():
            for path in self.sessions.glob("*.jsonl"):
                try:
                    stat = path.stat()
                except OSError:
                    continue
                on_disk[path.stem] = stat
        for gone in set(known) - set(on_disk):
            with self._transaction():
                self.db.execute("DELETE FROM lines WHERE session_id = ?", (gone,))
                self.db.execute("DELETE FROM files WHERE session_id = ?", (gone,))
        changed = 0
        for session_id, stat in sorted(on_disk.items()):
            if known.get(session_id) == (stat.st_ino, stat.st_size, stat.st_mtime_ns):
                continue
            with self._transaction():
                changed += self._index_file(session_id, stat)
        return changed

    def _transaction(self) -> Any:
        return _Transaction(self.db)

    def _index_file(self, session_id: str, stat: os.stat_result) -> int:
        row = self.db.execute(
            "SELECT inode, size, mtime_ns, offset, sig, at, cwd, title, usable FROM files WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        if row is not None and tuple(row[:3]) == (stat.st_ino, stat.st_size, stat.st_mtime_ns):
            return 0  # another search indexed it meanwhile
        path = self.sessions / f"{session_id}.jsonl"
        try:
            handle = path.open("rb")
        except OSError:
            return 0
        with handle:
            go_on = (
                row is not None
                and row[0] == stat.st_ino
                and row[8]
                and 0 < row[3] <= stat.st_size
                and _signature(handle, row[3]) == row[4]
            )
            if go_on:
                offset, at, cwd, title, usable = row[3], row[5], row[6], row[7], True
            else:
                self.db.execute("DELETE FROM lines WHERE session_id = ?", (session_id,))
                offset, at, cwd, title, usable = 0, "", "", "", False
            handle.seek(offset)
            rows: list[tuple[str, str, str, str]] = []
            for start, end, line in _whole_lines(handle, offset):
                record = _record(line) if line is not None else None
                if start == 0 or not usable:
                    usable = record is not None and record.get("type") == "header"
                    if not usable:
                        break
                    at = str(record.get("created_at") or "")
                    cwd = _real(str(record.get("cwd") or ""))
                    title = str(record.get("title") or "")
                if record is None:
                    continue
                kind = record.get("type")
                if kind in ("run", "request") and isinstance(record.get("at"), str):
                    at = max(at, record["at"])
                elif kind == "message":
                    rows += [(text, session_id, role, at) for role, text in _texts(record)]
                offset = end
            if rows:
                self.db.executemany("INSERT INTO lines (text, session_id, role, at) VALUES (?, ?, ?, ?)", rows)
            sig = _signature(handle, offset)
        self.db.execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, stat.st_ino, stat.st_size, stat.st_mtime_ns, offset, sig, at, cwd, title, int(usable)),
        )
        return 1

    # -- asking it --------------------------------------------------------------------------------
    def search(self, text: str, *, cwd: Path | None = None, role: str | None = None, limit: int = 50) -> list[Hit]:
        """Lines holding every word of `text` (case-insensitive), newest first."""
        self.refresh()
        terms = [t for t in text.split() if t]
        if not terms:
            return []
        where, args = [], []
        long_terms = [t for t in terms if len(t) >= 3]
        if long_terms:
            where.append("lines MATCH ?")
            args.append(" AND ".join('"' + t.replace('"', '""') + '"' for t in long_terms))
        for term in (t for t in terms if len(t) < 3):
            where.append("lines.text LIKE ? ESCAPE '\\'")
            args.append("%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        if role is not None:
            where.append("lines.role = ?")
            args.append(role)
        if cwd is not None:
            where.append("files.cwd = ?")
            args.append(_real(str(cwd)))
        sql = (
            "SELECT lines.session_id, lines.at, lines.role, lines.text, files.title, files.cwd FROM lines "
            "JOIN files ON files.session_id = lines.session_id WHERE "
            + " AND ".join(where)
            + " ORDER BY lines.at DESC, lines.rowid DESC LIMIT ?"
        )
        return [Hit(*row) for row in self.db.execute(sql, (*args, limit))]


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT: two searches indexing at once take turns, file by file."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: Any, *_: Any) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _unusable() -> sqlite3.Connection:
    raise RuntimeError("cannot open an SQLite database, not even in memory")


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def _real(path: str) -> str:
    return os.path.realpath(path) if path else ""


def _signature(handle: Any, offset: int) -> str:
    """A digest of the bytes just before `offset`: an incremental read goes on only when they are still there."""
    start = max(0, offset - _SIG_BYTES)
    handle.seek(start)
    data = handle.read(offset - start)
    handle.seek(offset)
    return hashlib.sha256(data).hexdigest()[:32]


def _whole_lines(handle: Any, offset: int) -> Iterator[tuple[int, int, bytes | None]]:
    """(start, end, line without its newline) for each whole line from `offset`; a line longer than
    MAX_LINE_BYTES comes as None (read in pieces, never held); a last line with no newline is not
    given (it may still be being written)."""
    position = offset
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line or not line.endswith(b"\n"):
            if len(line) <= MAX_LINE_BYTES:
                return  # the end, or a torn or growing last line
            skipped = len(line)
            while True:  # too long: skip to its end without keeping it
                piece = handle.readline(1 << 20)
                skipped += len(piece)
                if not piece:
                    return
                if piece.endswith(b"\n"):
                    break
            yield position, position + skipped, None
            position += skipped
            continue
        yield position, position + len(line), line[:-1]
        position += len(line)


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _texts(record: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(role, line) for each non-blank line a message holds: user and assistant text under their role;
    tool calls (name and arguments) and results under "tool". Thinking is not indexed."""
    role, parts = record.get("role"), record.get("parts")
    if role not in ROLES or not isinstance(parts, list):
        return
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and role != "tool":
            text, who = part.get("text"), role
        elif kind == "tool_call":
            text, who = f"{part.get('name', '')} {json.dumps(part.get('arguments', {}), ensure_ascii=False)}", "tool"
        elif kind == "tool_result":
            text, who = part.get("content"), "tool"
        else:
            continue
        if not isinstance(text, str):
            continue
        for line in text.splitlines():
            if line.strip():
                yield who, line.strip()[:MAX_ROW_CHARS]


def excerpt(line: str, text: str, width: int = 160) -> str:
    """The part of `line` around the first word of `text` it holds, at most about `width` characters."""
    if len(line) <= width:
        return line
    lowered = line.lower()
    found = [i for t in text.split() if (i := lowered.find(t.lower())) >= 0]
    at = min(found) if found else 0
    start = max(0, min(at - width // 3, len(line) - width))
    piece = line[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(line) else "")

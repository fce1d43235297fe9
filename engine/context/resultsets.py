"""Large tool results as queryable sets (docs/architecture.md section 6).

A result over the size threshold is parsed into rows (a JSON array, CSV/TSV, `path:line:text` grep
output, or plain lines), stored in SQLite in the session folder (`sessions/<id>/results.sqlite`), raw
text included, and the model receives a summary, a handle, the column schema and how much it is
seeing. `query` and `grep` answer from the stored set, deterministically, through a read-only
connection that may only SELECT from that set's table.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arreio.engine.core.errors import ArreioError
from arreio.engine.core.nesting import json_loads

DB_NAME = "results.sqlite"
MAX_COLUMNS = 40
_GREP_LINE = re.compile(r"^([^:\n]{1,300}):(\d+):(.*)$")
_IDENT = re.compile(r"[^0-9a-zA-Z_]+")


class ResultSetError(ArreioError):
    """A bad handle or query: returned to the model as an error result, never raised to the user."""


@dataclass
class Table:
    kind: str  # json | csv | grep | lines
    columns: list[str]
    rows: list[list[Any]]


# -- parsing ------------------------------------------------------------------------------------
def _column_name(raw: object, taken: set[str]) -> str:
    name = _IDENT.sub("_", str(raw)).strip("_").lower() or "col"
    if name[0].isdigit():
        name = "c_" + name
    base, n = name, 2
    while name in taken or name in {"rowid", "_row"}:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _from_json(text: str) -> Table | None:
    try:
        data = json_loads(text)
    except ValueError:
        return None
    if isinstance(data, dict):  # {"items": [...], ...}: the largest list is the set
        lists = [v for v in data.values() if isinstance(v, list)]
        if not lists:
            return None
        data = max(lists, key=len)
    if not isinstance(data, list) or not data:
        return None
    if all(isinstance(item, dict) for item in data):
        keys: list[str] = []
        for item in data:
            keys += [k for k in item if k not in keys]
        keys = keys[:MAX_COLUMNS]
        taken: set[str] = set()
        columns = [_column_name(k, taken) for k in keys]
        rows = [[_scalar(item.get(k)) for k in keys] for item in data]
        return Table("json", columns, rows)
    return Table("json", ["value"], [[_scalar(item)] for item in data])


def _scalar(value: object) -> object:
    if value is None or isinstance(value, (int, float, str)):
        return value
    return json.dumps(value, ensure_ascii=False)


def _from_csv(text: str) -> Table | None:
    lines = text.splitlines()
    head = lines[0] if lines else ""
    delimiter = "\t" if head.count("\t") >= 1 else "," if head.count(",") >= 1 else None
    if delimiter is None or len(lines) < 3:
        return None
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    width = len(rows[0])
    consistent = sum(1 for r in rows if len(r) == width)
    if width < 2 or consistent < 0.9 * len(rows):
        return None
    taken: set[str] = set()
    columns = [_column_name(h, taken) for h in rows[0][:MAX_COLUMNS]]
    body = [[_typed(v) for v in (r + [""] * width)[: len(columns)]] for r in rows[1:] if r]
    return Table("csv", columns, body)


def _typed(value: str) -> object:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def _from_lines(text: str) -> Table:
    lines = text.splitlines()
    matched = [_GREP_LINE.match(ln) for ln in lines]
    if lines and sum(1 for m in matched if m) >= 0.8 * len(lines):
        rows = [[m.group(1), int(m.group(2)), m.group(3)] if m else [None, None, ln] for m, ln in zip(matched, lines)]
        return Table("grep", ["file", "line", "text"], rows)
    return Table("lines", ["line", "text"], [[i, ln] for i, ln in enumerate(lines, start=1)])


def parse_table(text: str) -> Table:
    stripped = text.strip()
    if stripped[:1] in "[{":
        table = _from_json(stripped)
        if table is not None:
            return table
    return _from_csv(stripped) or _from_lines(text)


# -- the store ----------------------------------------------------------------------------------
def _sql_type(values: list[object]) -> str:
    seen = [v for v in values if v is not None and v != ""]
    if seen and all(isinstance(v, int) and not isinstance(v, bool) for v in seen):
        return "INTEGER"
    if seen and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in seen):
        return "REAL"
    return "TEXT"


class ResultStore:
    """The session's result sets. Writes go through this object; queries through `query`/`grep`."""

    def __init__(self, session_dir: Path) -> None:
        self.path = session_dir / DB_NAME

    def exists(self) -> bool:
        return self.path.is_file()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path)
        db.execute(
            "CREATE TABLE IF NOT EXISTS result_sets (handle TEXT PRIMARY KEY, tool TEXT, arguments TEXT, "
            "kind TEXT, columns TEXT, types TEXT, rows INTEGER, chars INTEGER, raw TEXT)"
        )
        return db

    def store(self, tool: str, arguments: dict[str, Any], text: str) -> tuple[str, Table, list[str]]:
        """Save `text` (raw and parsed); returns (handle, table, column types)."""
        table = parse_table(text)
        types = [_sql_type([r[i] for r in table.rows[:2000]]) for i in range(len(table.columns))]
        with self._connect() as db:
            count = db.execute("SELECT COUNT(*) FROM result_sets").fetchone()[0]
            handle = f"rs_{count + 1}"
            cols = ", ".join(f'"{c}" {t}' for c, t in zip(table.columns, types))
            db.execute(f'CREATE TABLE "{handle}" (_row INTEGER PRIMARY KEY, {cols})')
            marks = ", ".join("?" * (len(table.columns) + 1))
            db.executemany(f'INSERT INTO "{handle}" VALUES ({marks})', [[i, *r] for i, r in enumerate(table.rows, 1)])
            db.execute(
                "INSERT INTO result_sets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    handle,
                    tool,
                    json.dumps(arguments, ensure_ascii=False),
                    table.kind,
                    json.dumps(table.columns),
                    json.dumps(types),
                    len(table.rows),
                    len(text),
                    text,
                ),
            )
        return handle, table, types

    def handles(self) -> list[str]:
        if not self.exists():
            return []
        with self._connect() as db:
            return [row[0] for row in db.execute("SELECT handle FROM result_sets ORDER BY rowid")]

    def describe(self, handle: str) -> dict[str, Any]:
        """The set's metadata, or a ResultSetError naming the handles that exist."""
        if self.exists():
            with self._connect() as db:
                row = db.execute(
                    "SELECT tool, arguments, kind, columns, types, rows, chars FROM result_sets WHERE handle = ?",
                    (handle,),
                ).fetchone()
            if row:
                keys = ("tool", "arguments", "kind", "columns", "types", "rows", "chars")
                meta = dict(zip(keys, row))
                meta["columns"], meta["types"] = json.loads(meta["columns"]), json.loads(meta["types"])
                return meta
        known = ", ".join(self.handles()) or "none yet"
        raise ResultSetError(f"no result set '{handle}' in this session (sets: {known})")

    def reader(self, handle: str) -> sqlite3.Connection:
        """A read-only connection that may only read `handle`'s table (the query text comes from the model)."""
        self.describe(handle)
        db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)

        def allow(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
            if action == sqlite3.SQLITE_SELECT or action == sqlite3.SQLITE_FUNCTION:
                return sqlite3.SQLITE_OK
            if action == sqlite3.SQLITE_READ and arg1 == handle:
                return sqlite3.SQLITE_OK
            return sqlite3.SQLITE_DENY

        db.set_authorizer(allow)
        return db

    def introduce(self, handle: str, tool: str, table: Any, types: list[str], raw: str, preview_rows: int) -> str:
        """What the model gets instead of a result stored as a set: the handle, schema, a profile of
        each column, the first rows and how to ask for the rest."""
        shown = table.rows[:preview_rows]
        with self.reader(handle) as db:
            profile = column_profile(db, handle, table.columns, types)
        schema = ", ".join(f"{c} {t}" for c, t in zip(table.columns, types))
        return "\n".join(
            [
                (
                    f"[result set {handle}: this {tool} result was {len(raw.splitlines())} lines / {len(raw)} chars — "
                    f"too large for the context, so it is stored whole as a queryable set of {len(table.rows)} rows "
                    f"({table.kind})]"
                ),
                f"Schema: {schema}",
                "Columns:",
                *profile,
                f"First {len(shown)} of {len(table.rows)} rows:",
                format_rows(table.columns, [tuple(r) for r in shown], width=160),
                (
                    f"[showing {len(shown)} of {len(table.rows)} rows. Ask for the rest with "
                    f'result_query(handle="{handle}", where=…, group_by=…, aggregate=…, order_by=…, limit=…, offset=…) '
                    f'or result_grep(handle="{handle}", pattern=…)]'
                ),
            ]
        )


def column_profile(
    db: sqlite3.Connection, handle: str, columns: list[str], types: list[str], limit: int = 3
) -> list[str]:
    """One line per column: type, distinct count, range or most common values."""
    out = []
    for name, kind in zip(columns, types):
        q = f'"{name}"'
        distinct = db.execute(f'SELECT COUNT(DISTINCT {q}) FROM "{handle}"').fetchone()[0]
        if kind in ("INTEGER", "REAL"):
            lo, hi, total = db.execute(f'SELECT MIN({q}), MAX({q}), SUM({q}) FROM "{handle}"').fetchone()
            out.append(f"- {name} {kind}: {distinct} distinct, min {lo}, max {hi}, sum {total}")
        else:
            top = db.execute(
                f'SELECT {q}, COUNT(*) AS n FROM "{handle}" GROUP BY {q} ORDER BY n DESC, {q} LIMIT {limit}'
            ).fetchall()
            shown = "; ".join(f"{_short(v)} ×{n}" for v, n in top if v is not None)
            out.append(
                f"- {name} TEXT: {distinct} distinct"
                + (f"; most common: {shown}" if distinct < 0.5 * max(1, _rows(db, handle)) else "")
            )
    return out


def _rows(db: sqlite3.Connection, handle: str) -> int:
    return db.execute(f'SELECT COUNT(*) FROM "{handle}"').fetchone()[0]


def _short(value: object, width: int = 60) -> str:
    text = str(value).replace("\n", " ")
    return text[:width] + ("…" if len(text) > width else "")


def format_rows(columns: list[str], rows: list[tuple], width: int = 300) -> str:
    lines = ["\t".join(columns)]
    for row in rows:
        lines.append("\t".join("" if v is None else _short(v, width) for v in row))
    return "\n".join(lines)

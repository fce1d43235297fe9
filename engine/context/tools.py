"""`result_query` and `result_grep`: deterministic answers from a stored large result (a result set).

They are registered with every run whose context feature is on, but offered to the model only once
the session holds a set (`engine/context/feature.py` withholds their schemas until then), so a model
never sees a tool whose prerequisite does not exist. A call with an unknown handle is an error result
that lists the handles there are.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.context.resultsets import ResultSetError, ResultStore, column_profile, format_rows
from arreio.engine.tools.base import Tool, ToolError, ToolResult
from arreio.engine.tools.pattern import MATCH_BUDGET_S, BoundedPattern
from arreio.engine.tools.run_context import RunContext

MAX_LIMIT = 500
GREP_SHOWN = 100


def session_dir(ctx: RunContext) -> Path:
    return ctx.state_dir / "sessions" / ctx.session_id


class QueryInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    handle: str = Field(description="The set's handle, e.g. 'rs_1'.")
    where: str | None = Field(
        None, description="SQL condition on the columns, e.g. \"file LIKE '%.py' AND line > 10\"."
    )
    columns: list[str] | None = Field(None, description="Columns (or SQL expressions) to return; default all.")
    group_by: list[str] | None = Field(None, description="Group rows by these columns.")
    aggregate: list[str] | None = Field(None, description="Aggregates, e.g. ['count(*)', 'sum(size)', 'avg(ms)'].")
    order_by: str | None = Field(None, description="SQL ordering, e.g. 'count(*) DESC' or 'line'.")
    limit: int = Field(50, ge=1, le=MAX_LIMIT, description="Rows to return (at most 500).")
    offset: int = Field(0, ge=0, description="Rows to skip (paging).")


class GrepSetInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    handle: str = Field(description="The set's handle, e.g. 'rs_1'.")
    pattern: str = Field(min_length=1, description="Python regular expression matched against each row's text.")


def _context_of(store: ResultStore, handle: str, meta: dict) -> str:
    with store.reader(handle) as db:
        profile = column_profile(db, handle, meta["columns"], meta["types"])
    return f"The set {handle} holds {meta['rows']} rows from {meta['tool']}; columns:\n" + "\n".join(profile)


class _ResultSetTool(Tool):
    """Both result-set tools read SQLite: the work runs in a thread so the event loop stays live."""

    repeat = "paged"
    read_only = True
    timeout_s = 30.0

    async def execute(self, args: Any, ctx: RunContext) -> ToolResult:
        return await asyncio.to_thread(self._run, args, ResultStore(session_dir(ctx)))

    def _run(self, args: Any, store: ResultStore) -> ToolResult:  # pragma: no cover - each tool has one
        raise NotImplementedError


class ResultQuery(_ResultSetTool):
    name = "result_query"
    description = (
        "Query a stored large result (a result set, named by its handle such as 'rs_1') with SQL pieces: "
        "filter (where), pick columns, group_by with aggregate (count(*), sum(col), avg(col), min, max), "
        "order_by, limit/offset. Deterministic; says how many rows matched and how many it shows."
    )
    input_model = QueryInput

    def _run(self, args: QueryInput, store: ResultStore) -> ToolResult:
        try:
            meta = store.describe(args.handle)
        except ResultSetError as error:
            raise ToolError(error.message) from None
        table = f'"{args.handle}"'
        picked = (
            [*(args.group_by or []), *(args.aggregate or [])] or args.columns or [f'"{c}"' for c in meta["columns"]]
        )
        where = f" WHERE {args.where}" if args.where else ""
        group = f" GROUP BY {', '.join(args.group_by)}" if args.group_by else ""
        if args.aggregate and not args.group_by:
            group = ""
        order = (
            f" ORDER BY {args.order_by}"
            if args.order_by
            else (" ORDER BY _row" if not (args.group_by or args.aggregate) else "")
        )
        body = f"SELECT {', '.join(picked)} FROM {table}{where}{group}"
        try:
            with store.reader(args.handle) as db:
                matched = db.execute(f"SELECT COUNT(*) FROM ({body})").fetchone()[0]
                cursor = db.execute(f"{body}{order} LIMIT {args.limit} OFFSET {args.offset}")
                names = [d[0] for d in cursor.description]
                rows = cursor.fetchall()
        except sqlite3.Error as error:
            raise ToolError(f"query failed: {error}; columns are {', '.join(meta['columns'])}") from None
        if not rows:
            why = "no rows match" if matched == 0 else f"offset {args.offset} is past the {matched} matching rows"
            return ToolResult(
                f"{why}{' the condition ' + repr(args.where) if args.where and matched == 0 else ''}.\n"
                + _context_of(store, args.handle, meta)
            )
        first, last = args.offset + 1, args.offset + len(rows)
        unit = "groups" if args.group_by else "rows"
        head = f"{unit} {first}–{last} of {matched} matching (the set has {meta['rows']} rows)"
        more = f"\n[showing {len(rows)} of {matched} {unit}; next page: offset={last}]" if last < matched else ""
        return ToolResult(f"{head}\n{format_rows(names, rows)}{more}")


class ResultGrep(_ResultSetTool):
    name = "result_grep"
    description = (
        "Search a stored large result (a result set, by handle such as 'rs_1') with a Python regular "
        "expression; returns the matching rows with their row numbers (at most 100, the total is reported)."
    )
    input_model = GrepSetInput

    async def execute(self, args: GrepSetInput, ctx: RunContext) -> ToolResult:
        # As grep's: well under the configured tool timeout, so a slow pattern is named as the reason.
        budget = min(MATCH_BUDGET_S, 0.5 * ctx.settings.tools.timeout_s)
        return await asyncio.to_thread(self._grep, args, ResultStore(session_dir(ctx)), budget)

    def _grep(self, args: GrepSetInput, store: ResultStore, budget_s: float) -> ToolResult:
        regex = BoundedPattern(args.pattern, tool=self.name, budget_s=budget_s)
        try:
            meta = store.describe(args.handle)
        except ResultSetError as error:
            raise ToolError(error.message) from None
        columns = meta["columns"]
        hits, total = [], 0
        with store.reader(args.handle) as db:
            for row in db.execute(
                f'SELECT _row, {", ".join(chr(34) + c + chr(34) for c in columns)} FROM "{args.handle}" ORDER BY _row'
            ):
                text = "\t".join("" if v is None else str(v) for v in row[1:])
                if regex.search(text):
                    total += 1
                    if len(hits) < GREP_SHOWN:
                        hits.append(row)
        if not hits:
            return ToolResult(f"no row matches {args.pattern!r}.\n" + _context_of(store, args.handle, meta))
        shown = f"\n[showing {len(hits)} of {total} matching rows]" if total > len(hits) else ""
        return ToolResult(f"{total} of {meta['rows']} rows match\n{format_rows(['_row', *columns], hits)}{shown}")


def resultset_tools() -> list[Tool]:
    return [ResultQuery(), ResultGrep()]

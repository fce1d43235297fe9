"""Large results become queryable sets: a 5,000-row result turns into a handle, and result_query /
result_grep answer from real SQLite in the session folder, deterministically and read-only."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from arreio.engine.context.feature import ContextHook
from arreio.engine.context.resultsets import ResultStore, parse_table
from arreio.engine.context.settings import load_context_settings
from arreio.engine.context.tools import resultset_tools
from arreio.engine.core.config import Settings
from arreio.engine.core.errors import ConfigError
from arreio.engine.core.tokens import Calibrator
from arreio.engine.tools.base import Tool, ToolResult
from arreio.engine.tools.run_context import RunContext
from tests.conftest import drain, make_runner
from tests.context.task_provider import TaskProvider, call

REGIONS = ["north", "south", "east", "west"]
ROWS = [(i, REGIONS[(i * 7) % 4], (i * 37) % 500 + 10) for i in range(5000)]
CSV = "id,region,amount\n" + "\n".join(f"{i},{r},{a}" for i, r, a in ROWS) + "\n"


class _NoArgs(BaseModel):
    pass


class DumpSales(Tool):
    name = "dump_sales"
    description = "print the sales table"
    input_model = _NoArgs

    async def execute(self, args, ctx: RunContext) -> ToolResult:
        return ToolResult(CSV)


def _handle(ctx: str) -> str:
    return re.findall(r"\[result set (rs_\d+)", ctx)[-1]


def _query(**kw):
    return lambda ctx: ("", [("result_query", {"handle": _handle(ctx), **kw})])


def test_a_5000_row_result_becomes_a_handle_and_queries_filter_group_and_sum(tmp_path: Path) -> None:
    steps = [
        call("dump_sales"),
        _query(group_by=["region"], aggregate=["sum(amount)", "count(*)"], order_by="region"),
        _query(where="region = 'north' AND amount > 400", aggregate=["count(*)"]),
        _query(where="region = 'nowhere'"),
        _query(columns=["id", "amount"], order_by="amount DESC, id", limit=3),
        lambda ctx: ("", [("result_grep", {"handle": _handle(ctx), "pattern": r"^4999\t"})]),
    ]
    provider = TaskProvider(steps)
    settings = Settings(context={"resultset_preview_rows": 5})
    hook = ContextHook(
        load_context_settings(settings.context), tmp_path / "sessions" / "s-test", tmp_path / "work", Calibrator()
    )
    runner = make_runner(
        tmp_path, provider, extra_tools=[DumpSales(), *resultset_tools()], settings=settings, hooks=[hook]
    )
    asyncio.run(drain(runner))
    results = [m.tool_result_part.content for m in runner.session.messages if m.tool_result_part]
    handle_text, grouped, filtered, empty, top, grep = results
    assert handle_text.startswith("[result set rs_1:") and len(handle_text) < 2_500
    assert "5000 rows" in handle_text and "Schema: id INTEGER, region TEXT, amount INTEGER" in handle_text
    assert "[showing 5 of 5000 rows." in handle_text
    # The tools were withheld until the set existed, then offered.
    assert "result_query" not in [t.name for t in provider.requests[0].tools]
    assert "result_query" in [t.name for t in provider.requests[1].tools]
    sums = {r: sum(a for _, reg, a in ROWS if reg == r) for r in REGIONS}
    lines = grouped.splitlines()
    assert lines[0] == "groups 1–4 of 4 matching (the set has 5000 rows)"
    for line in lines[2:]:
        region, total, count = line.split("\t")
        assert int(total) == sums[region] and int(count) == sum(1 for _, reg, _ in ROWS if reg == region)
    assert filtered.splitlines()[-1] == str(sum(1 for _, r, a in ROWS if r == "north" and a > 400))
    assert empty.startswith("no rows match") and "5000 rows" in empty and "region TEXT: 4 distinct" in empty
    assert top.splitlines()[0] == "rows 1–3 of 5000 matching (the set has 5000 rows)"
    assert "[showing 3 of 5000 rows; next page: offset=3]" in top
    assert grep.startswith("1 of 5000 rows match") and "4999" in grep
    assert hook.stats.result_sets == 1
    assert (tmp_path / "sessions" / "s-test" / "results.sqlite").is_file()


def test_queries_cannot_touch_anything_but_their_set(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "sessions" / "sid")
    handle, _, _ = store.store("t", {}, CSV)
    query = resultset_tools()[0]
    ctx = RunContext(cwd=tmp_path, env={"ARREIO_HOME": str(tmp_path)}, session_id="sid")
    from arreio.engine.tools.chain import run_tool
    from arreio.engine.tools.registry import ToolRegistry

    registry = ToolRegistry([query])
    for where in ["1=1; DROP TABLE rs_1", "id IN (SELECT raw FROM result_sets)"]:
        result = asyncio.run(run_tool(registry, "result_query", {"handle": handle, "where": where}, ctx))
        assert result.is_error and "query failed" in result.content
    ok = asyncio.run(run_tool(registry, "result_query", {"handle": handle, "aggregate": ["count(*)"]}, ctx))
    assert ok.content.splitlines()[-1] == "5000"
    result = asyncio.run(run_tool(registry, "result_query", {"handle": "rs_9"}, ctx))
    assert result.is_error and "rs_1" in result.content
    assert len(store.handles()) == 1


@pytest.mark.parametrize(
    ("text", "kind", "columns"),
    [
        (
            json.dumps([{"name": "a", "size": 1}, {"name": "b", "size": 2, "extra key": True}]),
            "json",
            ["name", "size", "extra_key"],
        ),
        (json.dumps({"total": 2, "items": [1, 2]}), "json", ["value"]),
        ("src/a.py:10: def f():\nsrc/b.py:3: x = 1\nsrc/b.py:9: y = 2\n", "grep", ["file", "line", "text"]),
        ("a\tb\n1\t2\n3\t4\n", "csv", ["a", "b"]),
        ("just some\nlog lines\n", "lines", ["line", "text"]),
    ],
)
def test_parsing_picks_the_shape(text: str, kind: str, columns: list[str]) -> None:
    table = parse_table(text)
    assert table.kind == kind and table.columns == columns


def test_bad_context_settings_name_the_field() -> None:
    with pytest.raises(ConfigError, match="context.watermark"):
        load_context_settings({"watermark": 2})
    with pytest.raises(ConfigError, match="context.nonsense"):
        load_context_settings({"nonsense": 1})


def test_a_shell_result_cut_for_the_model_is_stored_whole(tmp_path) -> None:
    """The shell keeps head and tail for the model; the result set gets every row."""
    import asyncio as _asyncio

    from arreio.engine.tools.run_context import RunContext
    from arreio.engine.tools.shell import Shell

    rows = "\n".join(["id,region,amount"] + [f"{i},{'eu' if i % 2 else 'us'},{i}" for i in range(3000)])
    (tmp_path / "export.csv").write_text(rows + "\n")
    ctx = RunContext(cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, settings=Settings(tools={"shell_output_cap": 5000}))
    result = _asyncio.run(Shell().execute(Shell.input_model(command="cat export.csv"), ctx))
    assert "chars omitted" in result.content and result.full is not None
    assert result.full.splitlines()[-1] == "2999,eu,2999" and len(result.full.splitlines()) == 3001

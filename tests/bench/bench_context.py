"""Context engineering on a replayed long task (a script, not a test: `python tests/bench/bench_context.py`).

A scripted model makes 120 tool calls over a generated repo (40 modules, a 3,000-row sales export, a
log): it reads every module, greps, dumps the sales table, pages through files, and notes a fact from
each result (`NOTE: key=value`); its final answer lists every note still visible to it. The same
script runs twice through the real pipeline — context engineering on (compaction at 60%, pruning,
result sets) and all off — against a 128k-token window (gpt-4o's), and we compare: total input
tokens sent (summaries included), peak context, share of stable prefix, and the facts the final
answer still holds (nothing the task needs may be lost).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: this checkout's arreio
from arreio.engine.context.feature import ContextFeature
from arreio.engine.loop.feature import Feature
from arreio.engine.providers.testing import FixedClock, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_sync
from arreio.engine.tools.base import Tool, ToolResult
from arreio.engine.tools.run_context import RunContext
from tests.context.task_provider import Ctx, TaskProvider, make_repo

REPO = Path(__file__).resolve().parents[2]

MODULES, ROWS, WINDOW = 40, 3000, 128_000
PAIRS = 37  # 1 + 40 reads + export + sum + 37 × (grep, page) + 3 = 120 tool calls


class _NoArgs(BaseModel):
    pass


class ExportSales(Tool):
    """Stands in for a database export tool: prints the whole table as CSV."""

    name = "export_sales"
    description = "Print the sales table as CSV."
    input_model = _NoArgs

    async def execute(self, args, ctx: RunContext) -> ToolResult:
        return ToolResult((ctx.cwd / "data" / "sales.csv").read_text())


class SalesFeature(Feature):
    name = "sales"

    def tools(self, ctx):
        return [ExportSales()]


def note_funcs(n: int):
    return lambda ctx: f"NOTE: mod{n}_funcs={ctx.last.count('def step_')}"


def steps() -> list:
    out = [lambda ctx: ("Looking around.", [("list_dir", {"path": "."})])]
    for n in range(MODULES):  # 40 reads; each next turn notes what the previous read showed
        out.append(_read_step(n))
    out.append(lambda ctx: (note_funcs(MODULES - 1)(ctx), [("export_sales", {})]))
    out.append(_sales_step)
    for k in range(PAIRS):  # greps, each followed by a page of a module
        out.append(_grep_step(k))
        out.append(_page_step(k))
    out.append(lambda ctx: ("Counting errors.", [("shell", {"command": "grep -c ERROR logs/app.log"})]))
    out.append(
        lambda ctx: (
            f"NOTE: errors={ctx.last.strip().splitlines()[0] if ctx.last.strip() else 'none'}",
            [("list_dir", {"path": "src"})],
        )
    )
    out.append(lambda ctx: ("Last look.", [("list_dir", {"path": "logs"})]))
    assert sum(1 for _ in out) == 120
    return out


def _read_step(n: int):
    def step(ctx: Ctx):
        text = note_funcs(n - 1)(ctx) if n else "Reading the modules."
        return text, [("read_file", {"path": f"src/mod_{n:02d}.py"})]

    return step


def _sales_step(ctx: Ctx):
    handle = re.search(r"\[result set (rs_\d+)", ctx.last)
    if handle:  # on: ask the set
        return "Summing by region.", [
            ("result_query", {"handle": handle.group(1), "where": "region = 'north'", "aggregate": ["sum(amount)"]})
        ]
    total = sum(int(row.split(",")[2]) for row in ctx.last.splitlines()[1:] if ",north," in row)
    return f"NOTE: north_total={total}", [("list_dir", {"path": "data"})]


def _grep_note(ctx: Ctx, k: int) -> str:
    line = next((ln for ln in ctx.last.splitlines() if f"def step_{k % MODULES}_3(" in ln), "")
    found = re.search(r":(\d+):", line)
    return f"NOTE: grep{k}={found.group(1) if found else 'missing'}"


def _grep_step(k: int):
    def step(ctx: Ctx):
        if k == 0:
            handled = re.findall(r"^(\d+)$", ctx.last, re.MULTILINE)
            text = f"NOTE: north_total={handled[-1]}" if "matching" in ctx.last and handled else "Next: search."
        else:
            text = "Searching."
        return text, [("grep", {"pattern": rf"def step_{k % MODULES}_\d+\(", "path": "src"})]

    return step


def _page_step(k: int):
    def step(ctx: Ctx):
        return _grep_note(ctx, k), [("read_file", {"path": f"src/mod_{k % MODULES:02d}.py", "offset": 1, "limit": 40})]

    return step


def run(context: dict, label: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        facts = make_repo(work, modules=MODULES, rows=ROWS, funcs=22)
        (work / ".arreio").mkdir()
        (work / ".arreio" / "config.yaml").write_text(
            json.dumps({"fsync": False, "max_steps": 400, "context": context})
        )
        provider = TaskProvider(steps())
        deps = PipelineDeps(
            clock=FixedClock(), provider_factory=provider_factory(provider), features=[SalesFeature(), ContextFeature()]
        )
        t0 = time.perf_counter()
        events = run_sync(
            RunOptions(
                goal_text="# Survey the repo\n\nNote facts from every module, the sales export and the log.",
                cwd=work,
                env={"PATH": "/usr/bin:/bin", "HOME": tmp},
                model="gpt-4o",
            ),
            deps,
        )
        wall = time.perf_counter() - t0
        report = json.loads(next((work / ".arreio" / "runs").glob("*/report.json")).read_text())
    done = events[-1]
    final = json.loads(done.final_text.removeprefix("FINAL ")) if done.final_text.startswith("FINAL") else {}
    expected = {f"mod{n}_funcs": str(facts["funcs"][n]) for n in range(MODULES)}
    expected["north_total"] = str(facts["north_total"])
    expected["errors"] = str(facts["errors"])
    kept = sum(1 for k, v in expected.items() if final.get(k) == v)
    greps = sum(1 for k in range(PAIRS) if final.get(f"grep{k}", "missing") != "missing")
    return {
        "label": label,
        "verdict": done.verdict,
        "tool_calls": report["tool_calls"],
        "input_tokens": provider.input_tokens,
        "peak": report["peak_context_tokens"],
        "prefix": report["stable_prefix_share"],
        "compactions": report["compactions"],
        "pruned": report["pruned_results"],
        "rereads": report["pruned_rereads"],
        "sets": report["result_sets"],
        "facts": f"{kept}/{len(expected)} (+{greps}/{PAIRS} grep)",
        "wall_s": round(wall, 2),
    }


def main() -> None:
    off = run({"enabled": False, "window": WINDOW}, "all off")
    rows = [
        off,
        run({"window": WINDOW}, "on (defaults)"),
        run({"window": WINDOW, "prune": False, "resultset_threshold_chars": 0}, "compaction only"),
        run({"window": WINDOW, "watermark": 0, "resultset_threshold_chars": 0}, "pruning only"),
        run({"window": WINDOW, "watermark": 0, "prune": False}, "result sets only"),
    ]
    for row in rows:
        saved = 1 - row["input_tokens"] / off["input_tokens"]
        print(json.dumps({**row, "input_saved": f"{saved:.0%}"}))


if __name__ == "__main__":
    main()

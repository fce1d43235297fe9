"""A scripted model for long runs that survives compaction: its position in the script is derived from
the history (assistant turns present + turns the summary at the top says it replaced), so a compacted
or resumed session picks up at the right step. It answers summary requests with a JSON summary that
keeps its `NOTE:` lines, like a real model would keep facts.

Used by tests/context and tests/bench/bench_context.py. Also: `make_repo`, a deterministic repo fixture.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from arreio.engine.context.compaction import SUMMARISER_BLOCK
from arreio.engine.core.model_io import Done, ModelRequest, StreamEvent, TextChunk, ToolCallDone, Usage
from arreio.engine.core.summary import summarised_turns
from arreio.engine.core.tokens import estimate_request

Step = Callable[[str], tuple[str, list[tuple[str, dict[str, Any]]]]]
_NOTE = re.compile(r"NOTE: ([\w.-]+)=([\w.-]+)")


class Ctx(str):
    """The visible context as text; `.last` is the newest tool result."""

    last: str = ""


def request_text(request: ModelRequest) -> str:
    out = []
    for m in request.messages:
        for p in m.parts:
            out.append(getattr(p, "text", "") or getattr(p, "content", "") or "")
    return "\n".join(out)


class TaskProvider:
    """Plays `steps` (each a function of the visible context → text and calls), then a final answer
    that lists every NOTE still visible. Usage is the arreio estimate of the request (o200k profile)."""

    name = "task"

    def __init__(self, steps: list[Step], *, fail_summaries: bool = False) -> None:
        self.steps = steps
        self.fail_summaries = fail_summaries
        self.requests: list[ModelRequest] = []
        self.summary_requests = 0
        self.input_tokens = 0

    def step_of(self, request: ModelRequest) -> int:
        return summarised_turns(request.messages) + sum(1 for m in request.messages if m.role == "assistant")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        usage = Usage(input_tokens=int(estimate_request(request, "o200k")), output_tokens=20)
        self.input_tokens += usage.input_tokens
        if request.system and request.system[0].name == SUMMARISER_BLOCK:
            self.summary_requests += 1
            if self.fail_summaries:
                yield TextChunk(text="I cannot summarise that.")
                yield Done(stop_reason="end_turn", usage=usage)
                return
            body = request_text(request)
            notes = sorted(set(_NOTE.findall(body)))
            summary = {
                "goal": body.split("GOAL:\n", 1)[-1].split("\n\n", 1)[0],
                "decisions": [f"NOTE: {k}={v}" for k, v in notes],
                "done": [ln[5:80] for ln in body.splitlines() if ln.startswith("CALL ")][-30:],
            }
            yield TextChunk(text=json.dumps(summary))
            yield Done(stop_reason="end_turn", usage=usage)
            return
        self.requests.append(request)
        index = self.step_of(request)
        if index < len(self.steps):
            ctx = Ctx(request_text(request))
            results = [m.tool_result_part for m in request.messages if m.tool_result_part is not None]
            ctx.last = results[-1].content if results else ""
            text, calls = self.steps[index](ctx)
        else:
            notes = dict(_NOTE.findall(request_text(request)))
            text, calls = "FINAL " + json.dumps(notes, sort_keys=True), []
        if text:
            yield TextChunk(text=text)
        for j, (name, arguments) in enumerate(calls):
            yield ToolCallDone(id=f"t{index}_{j}", name=name, arguments=arguments)
        yield Done(stop_reason="tool_use" if calls else "end_turn", usage=usage)


def call(name: str, text: str = "", **arguments: Any) -> Step:
    return lambda _ctx: (text, [(name, arguments)])


def make_repo(root: Path, modules: int = 40, rows: int = 5000, funcs: int = 12) -> dict[str, Any]:
    """A deterministic repo: `src/mod_NN.py` modules, `data/sales.csv` (rows), `logs/app.log`.
    Returns facts a task over it must find (for checking nothing was lost)."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "data").mkdir(exist_ok=True)
    (root / "logs").mkdir(exist_ok=True)
    for n in range(modules):
        lines = [f'"""Module {n}: helpers for part {n} of the pipeline."""', "", "import math", ""]
        for f in range(funcs + n % 7):
            lines += [
                f"def step_{n}_{f}(value, factor={f + 1}):",
                f'    """Scale value by {f + 1} and clamp it to the range of part {n}."""',
                f"    scaled = value * factor + {n * f}",
                f"    if scaled > {1000 + n}:",
                f"        return {1000 + n}",
                "    return math.floor(scaled)",
                "",
            ]
        (root / "src" / f"mod_{n:02d}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    regions = ["north", "south", "east", "west"]
    csv_lines = ["id,region,amount,units"]
    totals = dict.fromkeys(regions, 0)
    for i in range(rows):
        region, amount = regions[(i * 7) % 4], (i * 37) % 500 + 10
        totals[region] += amount
        csv_lines.append(f"{i},{region},{amount},{i % 9 + 1}")
    (root / "data" / "sales.csv").write_text("\n".join(csv_lines) + "\n", encoding="utf-8")
    log = [
        f"2026-06-27T10:{i // 60 % 60:02d}:{i % 60:02d} {'ERROR' if i % 97 == 0 else 'INFO'} "
        f"worker-{i % 5} job {i} done"
        for i in range(3000)
    ]
    (root / "logs" / "app.log").write_text("\n".join(log) + "\n", encoding="utf-8")
    return {
        "north_total": totals["north"],
        "errors": sum(1 for ln in log if " ERROR " in ln),
        "funcs": {n: funcs + n % 7 for n in range(modules)},
    }

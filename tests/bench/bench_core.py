"""Core performance figures for docs/benchmarks.md (a script, not a test: `python tests/bench/bench_core.py`).

1. Cold start of `arreio --help` (and of an offline run) next to `python -c pass`.
2. Harness overhead per turn on the scripted provider with a 1,000-message session, fsync on and off.
3. Session load + heal of a 100,000-message JSONL.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from arreio.engine.core.config import Settings
from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import Done, SystemBlock, TextChunk, ToolCallDone, Usage
from arreio.engine.loop.runner import Runner
from arreio.engine.providers.testing import FixedClock
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.session.healing import check_pairing
from arreio.engine.tools.base import Tool, ToolResult
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext


def wall(cmd: list[str], cwd: Path, runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cold_start(tmp: Path) -> None:
    exe = Path(sys.executable).with_name("arreio")
    (tmp / "G.md").write_text("# g\n\nRead `G.md` and write `out.md`.\n")
    base = wall([sys.executable, "-c", "pass"], tmp)
    helped = wall([str(exe), "--help"], tmp)
    offline = wall([str(exe), "run", "--goal", "G.md", "--offline"], tmp, runs=5)
    print(f"python -c pass            {base * 1000:7.0f} ms")
    print(f"arreio --help             {helped * 1000:7.0f} ms")
    print(f"arreio run --offline (4 turns) {offline * 1000:7.0f} ms")


class _Empty(BaseModel):
    pass


class Noop(Tool):
    name = "noop"
    description = "does nothing"
    input_model = _Empty

    async def execute(self, args, ctx) -> ToolResult:
        return ToolResult("ok")


def history(n: int) -> list[Message]:
    out: list[Message] = [Message.user("benchmark")]
    i = 0
    while len(out) < n:
        call = ToolCallPart(id=f"h{i}", name="noop", arguments={"i": i})
        out.append(Message.assistant([TextPart(text=f"turn {i} " + "x" * 80), call], model="offline"))
        out.append(Message.tool_result(ToolResultPart(call_id=call.id, name="noop", content="ok " + "y" * 200)))
        i += 1
    return out[:n]


class LoopProvider:
    """Asks for `noop` `turns` times, then answers — with as little work of its own as possible."""

    name = "loop"

    def __init__(self, turns: int) -> None:
        self.left = turns

    async def stream(self, request):
        self.left -= 1
        if self.left >= 0:
            yield ToolCallDone(id=f"c{self.left}", name="noop", arguments={})
            yield Done(stop_reason="tool_use", usage=Usage(input_tokens=1, output_tokens=1))
        else:
            yield TextChunk(text="done")
            yield Done(stop_reason="end_turn", usage=Usage(input_tokens=1, output_tokens=1))


def per_turn(tmp: Path, fsync: bool, turns: int = 200) -> float:
    header = SessionHeader(
        id=f"bench-{fsync}",
        created_at="2026-01-01T00:00:00.000Z",
        cwd=str(tmp),
        model="offline",
        system=[SystemBlock(name="identity", text="bench")],
    )
    session = Session.create(tmp / f"s-{fsync}", header)
    session.append_many(history(1000))
    session.durable = fsync
    tools = ToolRegistry([Noop()])
    clock = FixedClock()
    ctx = RunContext(cwd=tmp, clock=clock, settings=Settings(max_steps=turns + 5))
    runner = Runner(
        provider=LoopProvider(turns), model="offline", session=session, tools=tools, ctx=ctx, system=header.system
    )

    async def go() -> None:
        async for _ in runner.run(None):
            pass

    t0 = time.perf_counter()
    asyncio.run(go())
    elapsed = time.perf_counter() - t0
    return elapsed / (turns + 1) * 1e6


def load_heal(tmp: Path, n: int = 100_000) -> tuple[float, int]:
    header = SessionHeader(id="big", created_at="2026-01-01T00:00:00.000Z", cwd=str(tmp), model="offline")
    session = Session.create(tmp / "big", header)
    msgs = history(n)
    # leave the last call without a result so healing has work to do
    msgs.append(Message.assistant([ToolCallPart(id="orphan", name="noop")], model="offline"))
    session.append_many(msgs)
    session.close()
    size = session.path.stat().st_size
    t0 = time.perf_counter()
    loaded, repairs = Session.open(session.path, repair=False)
    elapsed = time.perf_counter() - t0
    assert len(loaded.messages) >= n and repairs and not check_pairing(loaded.messages)
    return elapsed, size


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cold_start(tmp)
        for fsync in (True, False):
            print(
                f"per-turn overhead, 1,000-message session, fsync={'on ' if fsync else 'off'}: "
                f"{per_turn(tmp, fsync):8.0f} µs/turn"
            )
        seconds, size = load_heal(tmp)
        print(f"load + heal 100,000 messages ({size / 1e6:.1f} MB): {seconds:.2f} s")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()

"""Benchmark (not a test): load + heal a 100,000-message session.

    python tests/bench/bench_session.py [messages]

Writes a session of rounds (user, assistant with two parallel calls, two results, assistant answer)
into a temp folder, then times: a clean load, heal alone, a load that repairs a torn tail, and a load
whose last call lost its results (pairing repair, so a full atomic rewrite).
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from pathlib import Path

from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.session.healing import heal

MODEL = "anthropic/claude-sonnet-4-5"


def round_of(n: int) -> list[Message]:
    a, b = f"toolu_{n}_a", f"toolu_{n}_b"
    return [
        Message.user(f"step {n}: look at the next file and tell me what it does"),
        Message.assistant(
            [
                TextPart(text="Reading two files."),
                ToolCallPart(id=a, name="read_file", arguments={"path": f"src/mod_{n}.py"}),
                ToolCallPart(id=b, name="shell", arguments={"command": f"wc -l src/mod_{n}.py"}),
            ],
            model=MODEL,
        ),
        Message.tool_result(ToolResultPart(call_id=a, name="read_file", content="def f(x):\n    return x * 2\n" * 5)),
        Message.tool_result(ToolResultPart(call_id=b, name="shell", content=f"{n % 97} src/mod_{n}.py")),
        Message.assistant([TextPart(text=f"Module {n} doubles its input.")], model=MODEL),
    ]


def timed(label: str, action):
    """Wall and CPU seconds: on a busy machine the CPU figure is the one to compare."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = action()
    print(f"{label:<46} {time.perf_counter() - wall:6.2f} s wall {time.process_time() - cpu:6.2f} s cpu")
    return value


def main(total: int = 100_000) -> None:
    with tempfile.TemporaryDirectory() as folder:
        header = SessionHeader(id="bench", created_at="2026-06-27T16:00:00.000Z", cwd=folder, model=MODEL)
        with Session.create(Path(folder), header) as session:
            batch: list[Message] = []
            n = 0
            while len(session.messages) + len(batch) < total:
                batch.extend(round_of(n))
                n += 1
                if len(batch) >= 5_000:
                    session.append_many(batch)
                    batch = []
            session.append_many(batch[: total - len(session.messages)])
        path, count = session.path, len(session.messages)
        del session, batch  # the writer's copy would double the heap the loads below are timed on
        gc.collect()
        size = path.stat().st_size
        print(f"session: {count:,} messages, {size / 1e6:.1f} MB")

        loaded, repairs = timed("load + heal (clean, repair=True)", lambda: Session.open(path))
        loaded.close()
        assert not repairs and len(loaded.messages) == count
        timed("heal alone (in memory)", lambda: heal(loaded.messages))

        with open(path, "ab") as handle:
            handle.write(b'{"type":"message","role":"assistant","parts":[{"type":"te')
        loaded, repairs = timed("load + repair torn tail (truncate)", lambda: Session.open(path))
        loaded.close()
        assert [r.kind for r in repairs] == ["torn_tail"]

        with loaded:
            loaded.append(round_of(n + 1)[1])  # a call whose results never land
        loaded, repairs = timed("load + heal + atomic rewrite (2 interrupted)", lambda: Session.open(path))
        loaded.close()
        assert [r.kind for r in repairs] == ["interrupted_result", "interrupted_result"]


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)

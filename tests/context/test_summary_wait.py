"""How long a compaction waits for the summary: 180 s for a cloud model; for a local server, long
enough for a slow CPU to read the transcript, then as long as its stream keeps producing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from arreio.engine.context.compaction import prepare_compaction, summarise
from arreio.engine.context.settings import ContextSettings
from arreio.engine.context.summary_wait import CLOUD_WAIT_S, LocalPace, SummaryWait, summary_wait
from arreio.engine.core.messages import Message, TextPart, ToolCallPart, ToolResultPart
from arreio.engine.core.model_io import Done, ModelRequest, StreamEvent, TextChunk, Usage


def test_a_cloud_model_waits_180_s_and_a_set_value_wins_everywhere() -> None:
    assert ContextSettings().summary_timeout_s is None
    assert summary_wait(None, False, 50_000) == SummaryWait(CLOUD_WAIT_S, None)
    assert summary_wait(600, False, 50_000) == SummaryWait(600, None)
    assert summary_wait(600, True, 50_000) == SummaryWait(600, None)


def test_a_local_server_waits_for_the_transcript_to_be_read_then_while_it_streams() -> None:
    small, large = summary_wait(None, True, 1_000), summary_wait(None, True, 20_000)
    assert small.first_s > CLOUD_WAIT_S and large.first_s > small.first_s
    # 20,000 tokens read at 3 tokens/s (the slowest measured prefill) fit in the first wait
    assert large.first_s >= 20_000 / 3
    assert small.idle_s is not None and large.idle_s is not None


def _history() -> list[Message]:
    out = [Message.user("Summarise the notes.")]
    for n in range(4):
        call = ToolCallPart(id=f"c{n}", name="read_file", arguments={"path": f"f{n}.txt"})
        out += [
            Message.assistant([TextPart(text=f"reading f{n}.txt"), call], model="m"),
            Message.tool_result(ToolResultPart(call_id=call.id, name="read_file", content="x" * 200)),
        ]
    return out


class SlowStream:
    """A local server's pace: the summary arrives in many small pieces, `gap_s` apart; after
    `stall_after` pieces it goes silent."""

    name = "slow"

    def __init__(self, pieces: int, gap_s: float, stall_after: int | None = None) -> None:
        self.pieces, self.gap_s, self.stall_after = pieces, gap_s, stall_after

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        text = json.dumps(
            {"goal": "Summarise the notes.", "in_progress": ["reading the notes"], "next_steps": ["write the summary"]}
        )
        size = -(-len(text) // self.pieces)
        for n in range(self.pieces):
            if self.stall_after is not None and n == self.stall_after:
                await asyncio.sleep(3600)
            await asyncio.sleep(self.gap_s)
            yield TextChunk(text=text[n * size : (n + 1) * size])
        yield Done(stop_reason="end_turn", usage=Usage())


def _summarise(provider: SlowStream, **kw: object) -> tuple[str, str]:
    plan = prepare_compaction(_history(), keep_tail_tokens=1, weigh=lambda m: 1.0)
    assert plan is not None
    summary, source, _ = asyncio.run(summarise(provider, "m", plan, **kw))
    return source, summary.in_progress[0] if summary.in_progress else ""


def test_a_local_stream_still_producing_is_waited_for() -> None:
    # The stream takes at least 40 × 0.05 = 2 s; the first wait is 0.5 s, but every piece extends it.
    pace = LocalPace(prefill_tokens_per_s=1e9, base_s=0.5, idle_s=30.0)
    assert _summarise(SlowStream(40, 0.05), local=True, pace=pace) == ("model", "reading the notes")
    # The same stream with a fixed whole wait (a set `summary_timeout_s`, or a cloud model's) is cut off.
    source, _ = _summarise(SlowStream(40, 0.05), timeout_s=0.5, local=True)
    assert source.startswith("fallback: no answer within")


def test_a_local_stream_that_goes_silent_falls_back() -> None:
    pace = LocalPace(prefill_tokens_per_s=1e9, base_s=30.0, idle_s=0.3)
    source, _ = _summarise(SlowStream(10, 0.0, stall_after=3), local=True, pace=pace)
    assert source.startswith("fallback: the stream stopped")

"""The stall watchdog on a model stream: one timer a stream (`Silence`), cut only after `stall_s` of
waiting for a chunk — not for a slow consumer, not for a stream that keeps talking, and never in
place of somebody else's cancel."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from arreio.engine.core.model_io import Done
from arreio.engine.loop.watchdog import Watchdog


async def _chunks(gaps: list[float]) -> AsyncIterator[str]:
    for i, gap in enumerate(gaps):
        await asyncio.sleep(gap)
        yield f"c{i}"


async def _read(watchdog: Watchdog, source: AsyncIterator[str], hold: float = 0.0) -> list[object]:
    got: list[object] = []
    async for item in watchdog.stream(source):
        got.append(item)
        if hold:
            await asyncio.sleep(hold)  # the consumer's own work between chunks
    return got


def test_a_stream_that_keeps_talking_is_never_cut() -> None:
    # Eight chunks 0.05 s apart: 0.4 s in all, four times the bound, never 0.1 s of silence.
    watchdog = Watchdog(stall_s=0.1)
    got = asyncio.run(_read(watchdog, _chunks([0.05] * 8)))
    assert got == [f"c{i}" for i in range(8)]
    assert watchdog.stalls == []


def test_a_slow_consumer_is_not_a_silent_model() -> None:
    # The consumer holds each chunk 0.15 s (over the bound); the stream itself answers at once.
    watchdog = Watchdog(stall_s=0.1)
    got = asyncio.run(_read(watchdog, _chunks([0.0] * 3), hold=0.15))
    assert got == ["c0", "c1", "c2"]
    assert watchdog.stalls == []


def test_silence_ends_the_stream_in_a_retryable_error() -> None:
    watchdog = Watchdog(stall_s=0.1)
    got = asyncio.run(_read(watchdog, _chunks([0.0, 0.05, 5.0])))
    assert got[:2] == ["c0", "c1"]
    last = got[-1]
    assert isinstance(last, Done) and last.error is not None and last.error.kind == "retryable"
    assert "no signal from the model for 0.1 s" in last.error.message
    assert [s.what for s in watchdog.stalls] == ["model"]


def test_an_outside_cancel_goes_on_as_a_cancel() -> None:
    watchdog = Watchdog(stall_s=5.0)

    async def main() -> None:
        task = asyncio.ensure_future(_read(watchdog, _chunks([0.0, 10.0])))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert watchdog.stalls == []


def test_the_task_is_not_left_cancelling_after_a_stall() -> None:
    # After a cut the same task goes on (a retry): its next await must not raise a stale cancel.
    watchdog = Watchdog(stall_s=0.05)

    async def main() -> tuple[list[object], int]:
        first = await _read(watchdog, _chunks([1.0]))
        await asyncio.sleep(0.01)
        second = await _read(watchdog, _chunks([0.0]))
        task = asyncio.current_task()
        assert task is not None
        return first + second, task.cancelling()

    got, cancelling = asyncio.run(main())
    assert isinstance(got[0], Done) and got[1] == "c0"
    assert cancelling == 0


def test_no_bound_passes_everything_through() -> None:
    watchdog = Watchdog(stall_s=None)
    assert asyncio.run(_read(watchdog, _chunks([0.0, 0.02]))) == ["c0", "c1"]


def test_a_stream_that_turns_the_cut_into_its_own_error_leaves_no_stale_cancel() -> None:
    # A provider that catches the cancel and raises something else: the error goes on, and the task
    # the run goes on in is not left cancelling (its next await would be cut for nothing).
    watchdog = Watchdog(stall_s=0.05)

    async def converting() -> AsyncIterator[str]:
        try:
            await asyncio.sleep(1.0)
        except asyncio.CancelledError:
            raise ConnectionError("stream closed") from None
        yield "never"

    async def main() -> int:
        with pytest.raises(ConnectionError):
            await _read(watchdog, converting())
        await asyncio.sleep(0.01)  # would raise CancelledError with a stale cancel
        task = asyncio.current_task()
        assert task is not None
        return task.cancelling()

    assert asyncio.run(main()) == 0

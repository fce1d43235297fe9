"""How long a compaction waits for the model's summary before it falls back to the deterministic one.

A cloud model answers a summary in seconds to a minute: 180 s is plenty. A local server may be a
small model on a CPU that reads the transcript at a few tokens a second (3–14 measured for a 0.5B
model on two busy cores, docs/benchmarks.md) before it writes a word, then writes at 2–3 tokens a
second; a fixed 180 s dropped every one of its summaries. So, unless `context.summary_timeout_s` is
set (then it is the whole wait, for every endpoint), a local endpoint's wait is:
- for the first chunk: the cloud's wait plus the transcript's tokens read at a conservative rate;
- after that, as long as the stream keeps producing: each chunk gives it `idle_s` more.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLOUD_WAIT_S", "LOCAL_PACE", "LocalPace", "SummaryWait", "summary_wait"]

CLOUD_WAIT_S = 180.0


@dataclass(frozen=True)
class LocalPace:
    """What a slow local server is assumed to manage: a prefill rate below the slowest measured, and
    the longest silence of a stream that is still working (a chunk may be a long line of JSON)."""

    prefill_tokens_per_s: float = 2.0
    base_s: float = CLOUD_WAIT_S
    idle_s: float = 180.0


LOCAL_PACE = LocalPace()


@dataclass(frozen=True)
class SummaryWait:
    first_s: float  # until the first chunk (the whole wait when `idle_s` is None)
    idle_s: float | None  # once it streams: the longest wait for the next chunk; None: no extension


def summary_wait(
    configured_s: float | None, local: bool, transcript_tokens: float, pace: LocalPace = LOCAL_PACE
) -> SummaryWait:
    """The wait for one summary: `configured_s` when set; else 180 s in all for a cloud model; else
    (a local endpoint) 180 s plus the transcript read at `pace`, then as long as the stream produces."""
    if configured_s is not None:
        return SummaryWait(configured_s, None)
    if not local:
        return SummaryWait(CLOUD_WAIT_S, None)
    return SummaryWait(pace.base_s + max(transcript_tokens, 0.0) / pace.prefill_tokens_per_s, pace.idle_s)

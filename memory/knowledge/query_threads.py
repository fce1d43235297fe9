"""How many threads embed a search's query: two when two cores are idle and two have been faster.

Idle cores (cores.py) catch a job that keeps a core busy, but not a core the machine does not get
to run: on a shared VM the hypervisor can take the second vCPU for a while, and the model's two
threads, which meet at a barrier after every step, then wait on it (measured in `arreio run` on
this project's 2-core VM: two threads 12 ms a query in one run, 20–50 ms in another, where one
thread takes ~21 ms). So each thread count's cost is kept as it is seen — a moving average of
seconds per byte of query, taken only while the cores looked idle — and the cheaper one is used;
every `explore_every`-th search on idle cores tries the other, so a change either way is noticed.
The first time of each count is dropped: it pays for the model's first pages and threads (~100 ms
here), which would make two threads look slow for dozens of searches. And on two cores a keyword
pass that runs beside the embedding has to wait for two embedding threads (passes.py), so two are
used only once a keyword pass has been quick: the first search of a process (all of `arreio kb
search`) embeds on one thread with the keyword pass alongside, as before.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

# A query's fixed part: e5's "query: " prefix and its special tokens, in bytes of text.
FIXED_BYTES = 24
# A keyword pass this quick can wait for a two-thread embedding (bm25.py's pass: ~1-3 ms).
QUICK_KEYWORD_S = 0.005


@dataclass
class QueryThreads:
    """The choice for one knowledge base; safe to share between threads."""

    explore_every: int = 16
    weight: float = 0.25  # of each new time in the moving average
    quick_keyword_s: float = QUICK_KEYWORD_S
    _cost: dict[int, float] = field(default_factory=dict)  # threads -> seconds per byte
    _warm: set[int] = field(default_factory=set)  # counts whose first time was seen (and dropped)
    _keyword_quick: bool = False  # the last keyword pass took at most `quick_keyword_s`
    _calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def choose(self, idle: int, keyword_beside: bool = False) -> int:
        """1 or 2 for a search that found `idle` idle cores (cores.idle_cores). `keyword_beside`:
        the search runs a keyword pass on another thread; on two idle cores two embedding threads
        make it wait for them, which only pays while it is quick (see `record_keyword`)."""
        if idle < 2:
            return 1
        with self._lock:
            if keyword_beside and idle < 3 and not self._keyword_quick:
                return 1
            self._calls += 1
            if 2 not in self._cost:
                return 2
            if 1 not in self._cost:
                return 1
            better = 2 if self._cost[2] <= self._cost[1] else 1
            return 3 - better if self._calls % self.explore_every == 0 else better

    def record(self, threads: int, idle: int, seconds: float, query: str) -> None:
        """What embedding `query` on `threads` threads took; kept only when the cores were idle, so
        both costs are of the same conditions (a one-thread time on a busy machine says nothing
        about an idle one), and not the first time of each count."""
        if idle < 2:
            return
        cost = seconds / (len(query.encode("utf-8", "replace")) + FIXED_BYTES)
        with self._lock:
            if threads not in self._warm:  # the first: the model's pages and threads start up
                self._warm.add(threads)
                return
            before = self._cost.get(threads)
            self._cost[threads] = cost if before is None else before + self.weight * (cost - before)

    def record_keyword(self, seconds: float) -> None:
        """What the last keyword pass took. Until one was quick, a search embeds on one thread with
        the keyword pass alongside: FTS5 ranks the first search of an index state (~40-80 ms at
        100,000 chunks), and waiting for two threads to embed before starting it made the first
        search of `arreio kb search` or of a run that much slower."""
        with self._lock:
            self._keyword_quick = seconds <= self.quick_keyword_s

    def costs(self) -> dict[int, float]:
        """Seconds per byte of query for each thread count seen (for benches and tests)."""
        with self._lock:
            return dict(self._cost)

"""Embedding the chunks that have no vector yet: what each chunk costs, and where it is embedded.

One `Job` per chunk: its own text, then the sentences its sentence pass needs (sentences.py). A
sentence that is nearly the whole chunk would get nearly the chunk's own vector, so it reuses that
vector instead of being embedded again; a chunk of one sentence has no sentence rows at all.

The jobs go to the model a few at a time (`batches`: up to `BATCH_CHARS` characters, every text of
them in one call, so the weights are read once for all of them), either in a daemon thread of this
process or, when there are several cores and enough work, in worker processes (one single-threaded
model per core, numpy's BLAS included: the element-wise steps between the products are
single-threaded anyway, and two processes keep both cores busy through them). Either way the
caller's thread only waits, so Ctrl-C (a KeyboardInterrupt in the main thread) stops the run at
once: the workers are killed, the thread's result is dropped, and nothing half-embedded is ever
stored. Results come back in job order, one job at a time.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arreio.memory.knowledge import cjk, sentences
from arreio.memory.knowledge.cores import usable_cores

if TYPE_CHECKING:
    import numpy as np

    from arreio.memory.knowledge.embedders import Embedder

# The embedder reads at most this much of one text. A chunk is ~1,500 characters, but a file of one
# huge line is one chunk of any size, and the model would embed all of it, 512 tokens at a time, for
# as long as it takes (a 2 MB line: most of an hour). Keyword search still sees the whole text.
EMBED_MAX_CHARS = 4_000
# A sentence holding at least this share of its chunk's characters is the chunk, to a vector.
NEAR_WHOLE = 0.9
# Worker processes start (spawn, import, load the model) in about two seconds: not worth it for less.
MIN_JOBS_FOR_WORKERS = 6
# One model call takes jobs up to this many characters (at least one job): ~10 chunks of markdown,
# about a second on one core. The runtime runs a call's short windows (the sentences) together, and
# more of them share a run in a longer call: on the docs, 16,000 characters took ~17% less CPU than
# 6,000 with OpenVINO (onnxruntime: the same). Longer calls gain little more and make the progress
# bar move in bigger steps.
BATCH_CHARS = 16_000
# What a worker's numpy reads when it loads: one BLAS thread, as the worker is one per core.
WORKER_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Job:
    """`texts[0]` is the chunk; `rows[i]` is the index in `texts` of sentence row i (0: the chunk's
    own vector stands in). `rows` is empty for a chunk without sentence vectors."""

    chunk_id: int
    texts: tuple[str, ...]
    rows: tuple[int, ...]

    @property
    def size(self) -> int:
        """Characters to embed: what the job costs, for an honest progress estimate."""
        return sum(len(text) for text in self.texts)


def plan(chunk_id: int, text: str, with_sentences: bool) -> Job:
    """The job for one chunk."""
    text = text[:EMBED_MAX_CHARS]
    own = cjk.unwrap(text)[:EMBED_MAX_CHARS]
    pieces = sentences.split(text) if with_sentences else []
    texts, rows = [own], []
    whole = max(len(own), 1)
    for piece in pieces:
        if len(piece) >= NEAR_WHOLE * whole:
            rows.append(0)
        else:
            rows.append(len(texts))
            texts.append(piece[:EMBED_MAX_CHARS])
    return Job(chunk_id, tuple(texts), tuple(rows))


def assemble(job: Job, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The chunk's vector and its sentence matrix (None without sentence rows)."""
    return vectors[0], (vectors[list(job.rows)] if job.rows else None)


def batches(
    jobs: Iterable[Job], max_chars: int = BATCH_CHARS, max_jobs: int | None = None
) -> Iterator[tuple[Job, ...]]:
    """Consecutive jobs grouped for one model call each: up to `max_chars` characters and
    `max_jobs` jobs, never empty."""
    batch: list[Job] = []
    size = 0
    for job in jobs:
        if batch and (size + job.size > max_chars or len(batch) == max_jobs):
            yield tuple(batch)
            batch, size = [], 0
        batch.append(job)
        size += job.size
    if batch:
        yield tuple(batch)


def _embed_batch(embedder: Any, batch: Sequence[Job]) -> list[np.ndarray]:
    """Every text of the batch in one call; each job's rows back on their own."""
    vectors = embedder.embed_passages([text for job in batch for text in job.texts])
    out, start = [], 0
    for job in batch:
        out.append(vectors[start : start + len(job.texts)])
        start += len(job.texts)
    return out


# -- where the jobs run --------------------------------------------------------------------------

_worker_embedder: Any = None


def _worker_init(embedder: Any) -> None:
    global _worker_embedder
    _worker_embedder = embedder
    if sys.platform.startswith("linux"):  # die with the parent, even a SIGKILLed one: no orphan keeps a core busy
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _worker_embed(batch: tuple[Job, ...]) -> list[np.ndarray]:
    return _embed_batch(_worker_embedder, batch)


def _in_thread(embedder: Embedder, jobs: Iterable[Job], ahead: int, max_chars: int) -> Iterator[tuple[Job, np.ndarray]]:
    """One daemon thread embeds up to `ahead` batches in advance; its exceptions (a KeyboardInterrupt
    raised by a test embedder included) come out here, in order."""
    todo: queue.Queue[tuple[Job, ...] | None] = queue.Queue(maxsize=ahead)
    done: queue.Queue[tuple[tuple[Job, ...], Any, BaseException | None]] = queue.Queue()
    stop = threading.Event()

    def work() -> None:
        while (batch := todo.get()) is not None and not stop.is_set():
            try:
                done.put((batch, _embed_batch(embedder, batch), None))
            except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
                done.put((batch, None, error))
                return

    thread = threading.Thread(target=work, name="arreio-embed", daemon=True)
    thread.start()
    source = batches(jobs, max_chars)
    in_flight = 0
    try:
        while True:
            while in_flight < ahead and (batch := next(source, None)) is not None:
                todo.put(batch)
                in_flight += 1
            if not in_flight:
                return
            batch, vectors, error = done.get()  # interruptible: Ctrl-C lands here at once
            in_flight -= 1
            if error is not None:
                raise error
            yield from zip(batch, vectors)
    finally:
        stop.set()
        try:
            todo.put_nowait(None)
        except queue.Full:
            pass  # the thread sees `stop` after its current call; its result is dropped


def _in_processes(
    worker: Any, jobs: Iterable[Job], processes: int, max_chars: int, max_jobs: int
) -> Iterator[tuple[Job, np.ndarray]]:
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # no fork of a process holding threads and SQLite
    # Workers ignore Ctrl-C (the terminal sends it to the whole process group): the parent decides.
    # Python keeps an ignored SIGINT ignored in the child, so this also covers its start-up.
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    added = [name for name in WORKER_ENV if name not in os.environ]  # a spawned child copies the environment
    os.environ.update({name: WORKER_ENV[name] for name in added})
    try:
        pool = context.Pool(processes, initializer=_worker_init, initargs=(worker,))
    finally:
        for name in added:
            os.environ.pop(name, None)
        if main:
            signal.signal(signal.SIGINT, previous)
    pending: list[tuple[tuple[Job, ...], Any]] = []
    source = batches(jobs, max_chars, max_jobs)
    try:
        while True:
            while len(pending) < 2 * processes and (batch := next(source, None)) is not None:
                pending.append((batch, pool.apply_async(_worker_embed, (batch,))))
            if not pending:
                break
            batch, result = pending.pop(0)
            yield from zip(batch, result.get())
        pool.close()
        pool.join()
    finally:
        pool.terminate()  # Ctrl-C or an error: kill the workers mid-call, drop their results


def run(
    embedder: Embedder, jobs: Iterable[Job], total: int, workers: int | None = None, max_chars: int = BATCH_CHARS
) -> Iterator[tuple[Job, np.ndarray]]:
    """(job, its vectors) for every one of the `total` jobs, in order. `workers`: processes to use
    (None: one per usable core, when the embedder can run in a worker and there is enough work);
    `max_chars`: the most characters one model call takes (`batches`). Closing the iterator early
    stops the workers."""
    worker = getattr(embedder, "for_worker", None)
    count = min(usable_cores() if workers is None else workers, total)
    if worker is not None and count >= 2 and (workers is not None or total >= MIN_JOBS_FOR_WORKERS):
        # At least two calls a worker: eight chunks of markdown fit one call of `max_chars`, which
        # would leave the other workers idle.
        return _in_processes(worker(), jobs, count, max_chars, max_jobs=max(1, -(-total // (2 * count))))
    return _in_thread(embedder, jobs, ahead=2, max_chars=max_chars)

"""Embedding the chunks that have no vector yet: what each chunk costs, and where it is embedded.

One `Job` per chunk: its own text, then the sentences its sentence pass needs (sentences.py). A
sentence that is nearly the whole chunk would get nearly the chunk's own vector, so it reuses that
vector instead of being embedded again; a chunk of one sentence has no sentence rows at all.

The jobs run either in a daemon thread of this process or, when there are several cores and
enough work, in worker processes (one single-threaded model per core: the model's own threads
scale poorly, and one short call per chunk keeps its working set in cache). Either way the caller's
thread only waits, so Ctrl-C (a KeyboardInterrupt in the main thread) stops the run at once: the
workers are killed, the thread's result is dropped, and nothing half-embedded is ever stored.
Results come back in job order.
"""

from __future__ import annotations

import contextlib
import queue
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
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
# Worker processes start (spawn, import, load the model) in about a second: not worth it for less.
MIN_JOBS_FOR_WORKERS = 6


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


# -- where the jobs run --------------------------------------------------------------------------

_worker_embedder: Any = None


def _worker_init(embedder: Any) -> None:
    global _worker_embedder
    _worker_embedder = embedder
    if sys.platform.startswith("linux"):  # die with the parent, even a SIGKILLed one: no orphan keeps a core busy
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _worker_embed(texts: tuple[str, ...]) -> np.ndarray:
    return _worker_embedder.embed_passages(list(texts))


def _in_thread(embedder: Embedder, jobs: Iterable[Job], ahead: int) -> Iterator[tuple[Job, np.ndarray]]:
    """One daemon thread embeds up to `ahead` jobs in advance; its exceptions (a KeyboardInterrupt
    raised by a test embedder included) come out here, in order."""
    todo: queue.Queue[Job | None] = queue.Queue(maxsize=ahead)
    done: queue.Queue[tuple[Job, Any, BaseException | None]] = queue.Queue()
    stop = threading.Event()

    def work() -> None:
        while (job := todo.get()) is not None and not stop.is_set():
            try:
                done.put((job, embedder.embed_passages(list(job.texts)), None))
            except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
                done.put((job, None, error))
                return

    thread = threading.Thread(target=work, name="arreio-embed", daemon=True)
    thread.start()
    source = iter(jobs)
    in_flight = 0
    try:
        while True:
            while in_flight < ahead and (job := next(source, None)) is not None:
                todo.put(job)
                in_flight += 1
            if not in_flight:
                return
            job, vectors, error = done.get()  # interruptible: Ctrl-C lands here at once
            in_flight -= 1
            if error is not None:
                raise error
            yield job, vectors
    finally:
        stop.set()
        try:
            todo.put_nowait(None)
        except queue.Full:
            pass  # the thread sees `stop` after its current call; its result is dropped


def _in_processes(
    worker: Any, jobs: Iterable[Job], processes: int
) -> Iterator[tuple[Job, np.ndarray]]:
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # no fork of a process holding threads and SQLite
    # Workers ignore Ctrl-C (the terminal sends it to the whole process group): the parent decides.
    # Python keeps an ignored SIGINT ignored in the child, so this also covers its start-up.
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        pool = context.Pool(processes, initializer=_worker_init, initargs=(worker,))
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
    pending: list[tuple[Job, Any]] = []
    source = iter(jobs)
    try:
        while True:
            while len(pending) < 2 * processes and (job := next(source, None)) is not None:
                pending.append((job, pool.apply_async(_worker_embed, (job.texts,))))
            if not pending:
                break
            job, result = pending.pop(0)
            yield job, result.get()
        pool.close()
        pool.join()
    finally:
        pool.terminate()  # Ctrl-C or an error: kill the workers mid-call, drop their results


def run(
    embedder: Embedder, jobs: Iterable[Job], total: int, workers: int | None = None
) -> Iterator[tuple[Job, np.ndarray]]:
    """(job, its vectors) for every one of the `total` jobs, in order. `workers`: processes to use
    (None: one per usable core, when the embedder can run in a worker and there is enough work).
    Closing the iterator early stops the workers."""
    worker = getattr(embedder, "for_worker", None)
    count = min(usable_cores() if workers is None else workers, total)
    if worker is not None and count >= 2 and (workers is not None or total >= MIN_JOBS_FOR_WORKERS):
        return _in_processes(worker(), jobs, count)
    return _in_thread(embedder, jobs, ahead=2)

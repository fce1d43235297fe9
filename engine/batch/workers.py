"""Local workers for `arreio batch -j N`: N long-lived processes, each running one attempt at a time.

Processes, not threads: a run is CPU-bound Python. Long-lived, because a run's first import of the
conveyor — and its first redactor, whose patterns take longer to compile than a whole offline run —
costs more than the run itself. `start` pays that once in the driver (`warm`), before any thread is
started there, then forks the N workers from it, so each starts warm; where fork is not available
(or threads run by then: a worker replacing a dead one) they start from a fork server or are spawned.

A worker that dies mid-attempt (killed, out of memory) loses only that try: the attempt is run
again by a fresh worker, up to `retries` more times, and its row says how many tries it took. An
attempt that outlives its own timeout by `GRACE_S` (a run stuck where asyncio cannot cancel it) is
killed with its worker and recorded as a timeout.

A cancelled batch (`close(kill=True)`) tells each busy worker to stop (SIGTERM): its attempt ends the
way Ctrl-C ends a run — the setup's processes and the run's gate commands killed, the copy of the
workdir removed (attempt.stop_on_sigterm) — and the worker exits. One that has not within
`STOP_GRACE_S` is killed, and the driver removes what its attempt left (workcopy.clean), as it does
for a worker that died or was killed for its timeout.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from arreio.engine.batch.attempt import AttemptSpec, Stopped, blank_row, run_attempt, stop_on_sigterm
from arreio.engine.batch.workcopy import clean

GRACE_S = 60.0
STOP_GRACE_S = 5.0  # how long a cancelled batch waits for a busy worker to stop its attempt itself
# What a run imports late; `warm` imports it (and the deps factory's own modules) before forking.
PRELOAD = [
    "arreio.engine.run.pipeline",
    "arreio.engine.providers.scripted",
    "arreio.engine.tools.builtin",
    "arreio.engine.providers.replay",
    "arreio.engine.providers.recorder",
]


def warm(deps_factory: Callable[[], Any]) -> None:
    """Import what a run imports and compile what it compiles, so forked workers inherit it."""
    import importlib

    from arreio.engine.core.ports import process_env
    from arreio.engine.walls.redact import Redactor

    for name in PRELOAD:
        importlib.import_module(name)
    deps_factory()
    Redactor.from_env(process_env()).compiled()  # the pattern caches are what a worker's first run would fill


def _serve(conn: Connection, deps_factory: Callable[[], Any]) -> None:
    """A worker's loop: an attempt in, its row out, until the driver closes the pipe or says stop."""
    stop_on_sigterm()  # first: a fork inherits the driver's own SIGTERM handler
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle (it stops the workers)
    _die_with_parent()
    try:
        while True:
            try:
                spec = conn.recv()
            except (EOFError, OSError):
                return
            if spec is None:
                return
            row = run_attempt(spec, deps_factory)
            row["worker"] = f"local:{os.getpid()}"
            try:
                conn.send(row)
            except (BrokenPipeError, OSError):
                return
    except Stopped:
        return


def _die_with_parent() -> None:
    """A driver killed outright takes its workers with it (Linux), so a resume never meets an orphan
    still writing the attempt it is about to run again."""
    if sys.platform != "linux":
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:  # the driver was gone before the call took effect
        os._exit(1)


@dataclass
class _Worker:
    process: Any
    conn: Connection
    spec: AttemptSpec | None = None
    started: float = 0.0


class LocalWorkers:
    """The local backend: `submit` an attempt when `free()`, `poll` for finished rows."""

    name = "local"

    def __init__(self, workers: int, deps_factory: Callable[[], Any], *, retries: int = 2) -> None:
        self.size = max(1, workers)
        self.deps_factory = deps_factory
        self.retries = retries
        self._workers: list[_Worker] = []
        self._again: deque[AttemptSpec] = deque()  # tries to run again (their worker died)
        self._warm = False

    def _context(self) -> Any:
        methods = multiprocessing.get_all_start_methods()
        if "fork" in methods and sys.platform == "linux" and threading.active_count() == 1:
            return multiprocessing.get_context("fork")
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if "forkserver" in methods:
            context.set_forkserver_preload([*PRELOAD, getattr(self.deps_factory, "__module__", PRELOAD[0])])
        return context

    def _spawn(self) -> _Worker:
        mp = self._context()
        ours, theirs = mp.Pipe()
        process = mp.Process(target=_serve, args=(theirs, self.deps_factory), daemon=True, name="arreio-batch-worker")
        process.start()
        theirs.close()
        worker = _Worker(process, ours)
        self._workers.append(worker)
        return worker

    def start(self) -> None:
        if not self._warm:
            warm(self.deps_factory)
            self._warm = True
        while len(self._workers) < self.size:
            self._spawn()

    def _slots(self) -> int:
        return sum(w.spec is None for w in self._workers) + (self.size - len(self._workers))

    def free(self) -> int:
        self._resubmit()  # a retry takes a worker before anything new is started
        return self._slots()

    def busy(self) -> int:
        return sum(w.spec is not None for w in self._workers) + len(self._again)

    def running(self) -> list[tuple[AttemptSpec, float]]:
        return [(w.spec, w.started) for w in self._workers if w.spec is not None]

    def submit(self, spec: AttemptSpec) -> None:
        worker = next((w for w in self._workers if w.spec is None), None) or self._spawn()
        worker.spec, worker.started = spec, time.monotonic()
        try:
            worker.conn.send(spec)
        except (BrokenPipeError, OSError):  # it died idle: a fresh one takes the attempt
            self._drop(worker)
            self.submit(spec)

    def _resubmit(self) -> None:
        while self._again and self._slots() > 0:
            self.submit(self._again.popleft())

    def poll(self, timeout: float) -> list[dict[str, Any]]:
        """Rows of attempts finished within `timeout` seconds (retries and kills handled here)."""
        self._resubmit()
        busy = [w for w in self._workers if w.spec is not None]
        if not busy:
            time.sleep(min(timeout, 0.05))
            return []
        ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout))
        rows: list[dict[str, Any]] = []
        now = time.monotonic()
        for worker in busy:
            spec = worker.spec
            assert spec is not None
            if worker.conn in ready:
                try:
                    rows.append(worker.conn.recv())
                    worker.spec = None
                    continue
                except (EOFError, OSError):
                    pass  # died before answering: below
            elif worker.process.sentinel not in ready:
                if now - worker.started > spec.task.timeout_s + spec.task.setup_timeout_s + GRACE_S:
                    worker.process.kill()
                    worker.process.join(5)
                    self._drop(worker)
                    clean(spec.out_dir)
                    row = blank_row(spec)
                    row.update(verdict="timeout", message=f"timed out after {spec.task.timeout_s:g} s (killed)")
                    rows.append(row)
                continue
            worker.process.join(5)
            code = worker.process.exitcode
            self._drop(worker)
            clean(spec.out_dir)  # before a retry starts: what it left must not run on beside it
            rows += self._lost(spec, code)
        return rows

    def _lost(self, spec: AttemptSpec, code: int | None) -> list[dict[str, Any]]:
        how = f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit {code}"
        if spec.tries <= self.retries:
            self._again.append(dataclasses.replace(spec, tries=spec.tries + 1))
            return []
        row = blank_row(spec)
        row.update(message=f"the worker died ({how}) on each of {spec.tries} tries")
        return [row]

    def _drop(self, worker: _Worker) -> None:
        worker.conn.close()
        self._workers.remove(worker)

    def close(self, *, kill: bool = False) -> None:
        """Stop the workers: idle ones are told to leave (`kill`: killed); busy ones finish their attempt,
        or with `kill` (a cancel) stop it now — see the module's docstring."""
        busy = [w for w in self._workers if w.spec is not None]
        for worker in list(self._workers):
            if kill and worker.spec is not None:
                worker.process.terminate()  # SIGTERM: stop the attempt, clean up, leave
            elif kill:
                worker.process.kill()
            else:
                try:
                    worker.conn.send(None)
                except (BrokenPipeError, OSError):
                    pass
        if kill:
            deadline = time.monotonic() + STOP_GRACE_S
            try:
                for worker in busy:
                    worker.process.join(max(0.0, deadline - time.monotonic()))
            except KeyboardInterrupt:
                pass  # a second Ctrl-C while they stop: no more waiting (below, they are killed)
        for worker in list(self._workers):
            if kill and worker.process.is_alive():
                worker.process.kill()
            worker.process.join(5)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(5)
            worker.conn.close()
            if kill and worker.spec is not None:
                clean(worker.spec.out_dir)  # what a worker killed mid-attempt could not remove itself
        self._workers.clear()

"""`arreio batch --ray [ADDRESS]`: each attempt a Ray task, for suites one machine cannot hold.

`--ray` starts a local runtime (every core here, a small object store, no dashboard); an ADDRESS
(`auto`, `host:port`, `ray://host:port`) joins a running cluster, whose nodes must have the same
arreio installed (and, for real models, the API keys in their environment). The task's workdir —
with its script, cassette or recording to replay — is packed once per task and put in the object
store; the node unpacks it into a temporary folder, runs the attempt exactly as a local worker does
(`attempt.run_attempt`), and sends back the row and the attempt's state folder (sessions, the run's
report and events), which the driver unpacks into the batch folder. Nothing needs a shared disk.

A node or worker process lost mid-attempt is Ray's to handle: the task is retried (`max_retries`,
from `batch.retries`); a small actor on the driver's node counts each attempt's tries, so a retry
shows in its row (`tries`) and in the summary (`retried`). `import ray` happens only here, lazily.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import os
import shutil
import signal
import tarfile
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arreio.engine.batch.attempt import AttemptSpec, blank_row, run_attempt
from arreio.engine.batch.ray_address import check_answers
from arreio.engine.batch.settings import RaySettings
from arreio.engine.batch.workcopy import LEDGER, clean, orphaned
from arreio.engine.batch.workers import STOP_GRACE_S
from arreio.engine.core.errors import ConfigError, UsageError

MAX_BUNDLE_MB = 512  # a workdir bigger than this is not shipped: the message says to slim it down
_BUNDLES_KEPT = 64  # task bundles kept in the object store at once (driver memory stays flat)


def _pack(entries: dict[str, Path | None], *, skip: tuple[str, ...] = ()) -> bytes:
    """A gzip'd tar of named files and folders (None entries are left out)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        for name, path in entries.items():
            if path is not None:
                tar.add(
                    path,
                    arcname=name,
                    filter=lambda info: None if any(part in skip for part in Path(info.name).parts) else info,
                )
    return buffer.getvalue()


def _unpack(data: bytes, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(into, filter="data")  # no absolute paths, no links out of `into`


def _interruptible() -> None:
    """Ray stops a running task (a cancelled batch) with `_thread.interrupt_main`, which does nothing
    where Ctrl-C is ignored, and a worker ignores it when whatever started the node did (`ray start`
    from a script's background job, a program that had set it so): the attempt then never cleans up,
    and is killed outright with its setup's processes left running. Here Ctrl-C raises again."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) in (
        signal.SIG_IGN,
        signal.SIG_DFL,
    ):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _ray_attempt(spec: AttemptSpec, bundle: bytes, deps_factory: Callable[[], Any], tries: Any) -> tuple[dict, bytes]:
    """Runs on a Ray worker: unpack the task, run the attempt, pack its state folder."""
    import ray

    _interruptible()
    try_no = ray.get(tries.started.remote(f"{spec.task.id}#{spec.attempt}")) if tries is not None else 1
    _clean_orphans()
    root = Path(tempfile.mkdtemp(prefix="arreio-ray-"))
    try:
        _unpack(bundle, root / "in")
        given = root / "in"
        task = dataclasses.replace(
            spec.task,
            workdir=given / "workdir" if spec.task.workdir else None,
            script=given / "script" if spec.task.script else None,
            cassette=given / "cassette" if spec.task.cassette else None,
        )
        local = dataclasses.replace(
            spec, task=task, out_dir=root / "out", tries=try_no, replay=given / "replay" if spec.replay else None
        )
        row = run_attempt(local, deps_factory)
        row["worker"] = f"ray:{ray.get_runtime_context().get_node_id()[:8]}:{os.getpid()}"
        return row, _pack({".": local.out_dir}, skip=("checkpoints",))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _clean_orphans() -> None:
    """What attempts of a killed Ray worker on this node left (their folder here, the workdir's copy,
    the setup's processes: workcopy.py) — nobody else is left to remove it."""
    for ledger in Path(tempfile.gettempdir()).glob(f"arreio-ray-*/out/{LEDGER}"):
        if orphaned(ledger.parent):
            clean(ledger.parent)
            shutil.rmtree(ledger.parent.parent, ignore_errors=True)


def _sweep_after_local_runtime(wait_s: float = 5.0) -> None:
    """After a cancelled batch's local runtime is shut down, its workers die shortly after: clean what
    their attempts left as soon as each owner is gone. Another live process's attempts are left alone
    (`orphaned` says no while the owner lives), so a second batch on this machine is never touched."""
    deadline = time.monotonic() + wait_s
    while True:
        _clean_orphans()
        waiting = list(Path(tempfile.gettempdir()).glob(f"arreio-ray-*/out/{LEDGER}"))
        if not waiting or time.monotonic() > deadline:
            return
        time.sleep(0.1)


class _Tries:
    """How many times each attempt has started (a Ray retry starts it again)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def started(self, key: str) -> int:
        self.counts[key] = self.counts.get(key, 0) + 1
        return self.counts[key]


class RayBackend:
    name = "ray"

    def __init__(
        self,
        address: str | None,
        deps_factory: Callable[[], Any],
        settings: RaySettings,
        *,
        retries: int = 2,
        in_flight: int | None = None,
    ) -> None:
        self.address, self.deps_factory, self.settings = address, deps_factory, settings
        self.retries = retries
        self.in_flight = in_flight or settings.in_flight
        self._pending: dict[Any, tuple[AttemptSpec, float]] = {}
        self._bundles: OrderedDict[str, Any] = OrderedDict()
        self._connected = False
        self._remote: Any = None
        self._tries: Any = None

    def start(self) -> None:
        if self._remote is not None:
            return
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        if not ray.is_initialized():
            quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
            try:
                if self.address is None:
                    # "local": a runtime of our own even where RAY_ADDRESS names a cluster (Ray would
                    # join it, and refuse the object store size: "must not be provided").
                    ray.init(
                        address="local",
                        include_dashboard=False,
                        object_store_memory=self.settings.object_store_mb * 1024 * 1024,
                        **quiet,
                    )
                else:
                    check_answers(self.address)  # Ray itself retries for ~10 minutes (ray_address.py)
                    ray.init(address=self.address, **quiet)
                self._connected = True  # ours to shut down (a local runtime) or disconnect from (a cluster)
            except (ConnectionError, RuntimeError, ValueError) as error:
                where = (
                    "start a local Ray runtime" if self.address is None else f"join the Ray cluster at {self.address}"
                )
                raise ConfigError(f"--ray: could not {where}: {' '.join(str(error).split())[:300]}") from None
        here = ray.get_runtime_context().get_node_id()
        self._tries = (
            ray.remote(num_cpus=0)(_Tries)
            .options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=here, soft=False))
            .remote()
        )
        self._remote = ray.remote(_ray_attempt).options(
            num_cpus=self.settings.num_cpus, max_retries=self.retries, retry_exceptions=False
        )
        if self.in_flight is None:
            cpus = float(ray.cluster_resources().get("CPU", 1))
            self.in_flight = max(1, int(cpus / self.settings.num_cpus))

    def free(self) -> int:
        return max(0, (self.in_flight or 1) - len(self._pending))

    def busy(self) -> int:
        return len(self._pending)

    def running(self) -> list[tuple[AttemptSpec, float]]:
        return list(self._pending.values())

    def _bundle(self, spec: AttemptSpec) -> Any:
        import ray

        key = spec.task.id
        if key in self._bundles:
            self._bundles.move_to_end(key)
            return self._bundles[key]
        task = spec.task
        data = _pack(
            {"workdir": task.workdir, "script": task.script, "cassette": task.cassette, "replay": spec.replay},
            skip=(".arreio",),
        )
        if len(data) > MAX_BUNDLE_MB * 1024 * 1024:
            raise UsageError(
                f"task {task.id}: its workdir packs to {len(data) // 2**20} MB, more than --ray ships "
                f"({MAX_BUNDLE_MB} MB); leave build output and data out of it"
            )
        ref = ray.put(data)
        self._bundles[key] = ref
        while len(self._bundles) > _BUNDLES_KEPT:
            self._bundles.popitem(last=False)
        return ref

    def submit(self, spec: AttemptSpec) -> None:
        ref = self._remote.remote(spec, self._bundle(spec), self.deps_factory, self._tries)
        self._pending[ref] = (spec, time.monotonic())

    def poll(self, timeout: float) -> list[dict[str, Any]]:
        import ray

        if not self._pending:
            time.sleep(min(timeout, 0.05))
            return []
        ready, _ = ray.wait(list(self._pending), num_returns=len(self._pending), timeout=timeout, fetch_local=True)
        rows = []
        for ref in ready:
            spec, _started = self._pending.pop(ref)
            try:
                row, state = ray.get(ref)
            except Exception as error:  # noqa: BLE001 - every try lost (a worker or node died each time)
                row = blank_row(spec)
                row.update(
                    tries=self.retries + 1,
                    message=f"lost on Ray after {self.retries + 1} tries: "
                    f"{type(error).__name__}: {' '.join(str(error).split())[:200]}",
                )
                rows.append(row)
                continue
            if spec.out_dir.exists():
                shutil.rmtree(spec.out_dir)
            _unpack(state, spec.out_dir)
            rows.append(row)
        return rows

    def close(self, *, kill: bool = False) -> None:
        """End the batch's use of Ray. `kill` (a cancel): each running attempt is interrupted where it
        runs, so it kills its setup's processes and removes its copy itself (`run_attempt`'s own
        clean-up), for up to STOP_GRACE_S; what is still running then is killed outright. A local
        runtime, ours alone, is then swept for what a killed attempt left (`_clean_orphans`)."""
        if self._remote is None:
            return
        import ray

        left = list(self._pending)
        if kill and left:
            # force=True kills the worker process at once: its attempt cleaned nothing up, and the
            # setup's processes (a group of their own) outlived the batch, holding files and ports.
            for ref in left:
                ray.cancel(ref, force=False)
            try:
                _, left = ray.wait(left, num_returns=len(left), timeout=STOP_GRACE_S, fetch_local=False)
            except KeyboardInterrupt:
                pass  # a second Ctrl-C: no more waiting
            for ref in left:
                ray.cancel(ref, force=True)
        self._pending.clear()
        self._bundles.clear()
        self._remote = None
        if self._connected:
            ray.shutdown()
            if kill and self.address is None:
                _sweep_after_local_runtime()

"""Driving one `arreio batch`: check everything before anything is made, open or create the batch's
folder, pick the backend (local workers or Ray), run the scheduler under a view, learn from the wins
when asked, land the summary and return the exit code. The composition root for batches: attempts
get `cli.deps.pipeline_deps` (memory, skills, knowledge, learning), as `arreio run` does."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arreio.engine.core.ids import iso_ms, new_id
from arreio.engine.core.ports import SystemClock, process_env


@dataclass(frozen=True)
class BatchRequest:
    suite: Path | None
    jobs: int | None = None
    repeat: int | None = None
    ray: str | None = None  # None: local workers; "local": a local Ray runtime; else an address
    model: str | None = None
    resume: str | None = None
    filter: str | None = None
    json_output: bool = False
    min_pass_rate: float | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    learn: bool = False
    record: Path | None = None
    replay: Path | None = None


_REMEMBERED = ("repeat", "model", "filter", "min_pass_rate", "max_cost", "max_tokens", "learn")


def _merged(request: BatchRequest, stored: dict[str, Any]) -> dict[str, Any]:
    """A resume keeps what the batch was started with, unless a flag says otherwise now."""
    out = {}
    for key in _REMEMBERED:
        given = getattr(request, key)
        not_given = given is False if key == "learn" else given is None  # 0 and 0.0 are values (--max-cost 0)
        out[key] = stored.get(key, given) if not_given else given
    for key in ("record", "replay"):
        given = getattr(request, key)
        out[key] = given if given is not None else (Path(stored[key]) if stored.get(key) else None)
    out["repeat"] = int(out["repeat"] or 1)
    return out


def _check_ray() -> None:
    from arreio.engine.core.errors import ConfigError

    try:
        import ray  # noqa: F401 - only with --ray; the backend would import it next anyway
    except ImportError:
        raise ConfigError(
            "--ray needs Ray, which is not installed: pip install 'arreio[ray]' (or run without --ray)"
        ) from None


def run_batch_command(request: BatchRequest) -> int:
    from arreio.engine.batch.results import BatchFolder
    from arreio.engine.batch.settings import batch_settings
    from arreio.engine.batch.suite import load_suite
    from arreio.engine.core.config import load_settings
    from arreio.engine.core.errors import UsageError
    from arreio.engine.core.paths import make_state_dir, state_dir
    from arreio.engine.providers import registry

    cwd = Path.cwd()
    state = state_dir(cwd)
    settings = load_settings(cwd)
    config = batch_settings(settings)
    if request.ray is not None:
        _check_ray()
    root = state / "batches"
    folder: BatchFolder | None = None
    stored: dict[str, Any] = {}
    if request.resume:
        folder = BatchFolder.open(root, request.resume)
        stored = folder.meta()
    try:
        options = _merged(request, stored.get("options", {}))
        suite_path = request.suite or Path(stored.get("suite", ""))
        suite = load_suite(suite_path)  # as given: messages name the file the way the user wrote it
        tasks = suite.select(options["filter"])
        if not tasks:
            raise UsageError(
                f"--filter {options['filter']} matches no task of {suite_path} "
                f"(ids: {', '.join(t.id for t in suite.tasks[:8])})"
            )
        if options["model"]:
            registry.check_model(options["model"])
        if folder is None:
            make_state_dir(state)  # a folder made here keeps itself out of git (paths.STATE_GITIGNORE)
            now = SystemClock().now()
            meta_options = {k: (str(v) if isinstance(v, Path) else v) for k, v in options.items()}
            folder = BatchFolder.create(
                root,
                new_id(now),
                {
                    "suite": str(suite.path.resolve()),
                    "created_at": iso_ms(now),
                    "options": meta_options,
                    "suite_sha256": _digest(suite.path),
                },
            )
        else:
            if stored.get("suite_sha256") not in (None, _digest(suite.path)):
                print(
                    f"arreio: warning: {suite_path} changed since batch {request.resume} started; the attempts "
                    f"still to run use it as it is now",
                    file=sys.stderr,
                )
            folder.update_meta(resumed_at=iso_ms(SystemClock().now()))
        return _run(folder, suite, tasks, options, request, config, settings, cwd, state)
    finally:
        if folder is not None:
            folder.close()


def _digest(path: Path) -> str | None:
    """The suite file's sha256, so a resume can say when the suite changed since the batch began."""
    import hashlib

    from arreio.engine.core.regular_file import Limit, read_bytes

    try:
        return hashlib.sha256(read_bytes(path, limit=Limit.PLAN)).hexdigest()
    except OSError:
        return None


def _run(
    folder: Any,
    suite: Any,
    tasks: list[Any],
    options: dict[str, Any],
    request: BatchRequest,
    config: Any,
    settings: Any,
    cwd: Path,
    state: Path,
) -> int:
    from arreio.cli.batch_view import make_view
    from arreio.cli.deps import pipeline_deps
    from arreio.cli.interrupts import sigterm_interrupts
    from arreio.engine.batch.attempt import AttemptSpec, read_seeds
    from arreio.engine.batch.scheduler import Attempts, Budget, Scheduler
    from arreio.engine.batch.summary import Totals, summarize

    seeds = read_seeds(state)
    replay_dir = options["replay"]
    record_dir = options["record"]

    def make(task, n, out, rel):
        replay = replay_dir / f"{task.id}.cassette.jsonl" if replay_dir is not None else None
        if replay is not None and not replay.is_file() and (task.cassette is not None or task.script is not None):
            replay = None  # no recording, but the task is hermetic on its own: it runs as the suite says
        # (a task that would ask a live model keeps the missing recording: its attempt fails, never spends)
        return AttemptSpec(
            task=task,
            attempt=n,
            out_dir=out,
            rel=rel,
            model=options["model"],
            replay=replay,
            record=record_dir is not None,
            seeds=seeds,
        )

    finished = folder.finished()
    totals = Totals()
    ids = {t.id for t in tasks}
    for row in folder.rows():
        if row["task"] in ids and int(row["attempt"]) <= options["repeat"]:
            totals.add(row)
    attempts = Attempts(folder, tasks, options["repeat"], make, finished)
    backend = _backend(request, config, pipeline_deps)
    scheduler = Scheduler(
        folder,
        backend,
        Budget(options["max_cost"], options["max_tokens"]),
        totals,
        record_dir=record_dir,
        repeat=options["repeat"],
    )
    out = sys.stdout
    if request.ray is not None:  # Ray prints its workers' errors on sys.stdout: they are stderr's, not the results'
        sys.stdout = sys.stderr
    view = make_view(
        json_output=request.json_output,
        batch_id=folder.id,
        planned=attempts.planned,
        done_before=totals.attempts,
        backend=backend.name,
        out=out,
    )
    t0 = time.monotonic()
    cancelled = False
    try:
        try:
            with sigterm_interrupts():  # SIGTERM cancels as Ctrl-C does: workers stopped, summary kept, 130
                backend.start()  # before the live view's thread: local workers are forked from this process
                with view:
                    for update in scheduler.run(iter(attempts)):
                        view.update(update, scheduler.totals, backend.running())
        except KeyboardInterrupt:
            cancelled = True
        except BaseException:
            backend.close(kill=True)  # started here, outside the scheduler's own cleanup: no worker outlives us
            raise
        learning = None
        if options["learn"] and not cancelled:  # a cancelled batch learns on the resume that finishes it
            learning = _learn(folder, settings, cwd, state)
        stopped = "cancelled" if cancelled else scheduler.stopped
        summary = summarize(
            (r for r in folder.rows() if int(r["attempt"]) <= options["repeat"]),
            batch_id=folder.id,
            suite=str(suite.path),
            tasks=[t.id for t in tasks],
            repeat=options["repeat"],
            planned=attempts.planned,
            min_pass_rate=options["min_pass_rate"],
            stopped=stopped,
            wall_s=time.monotonic() - t0,
            learning=learning,
        )
        if cancelled:
            summary["exit_code"] = 130
        path = folder.write_summary(summary)
        view.final(summary, path)
    finally:
        sys.stdout = out
    if cancelled:
        try:
            print(f"arreio: cancelled; finish it with `arreio batch --resume {folder.id}`", file=sys.stderr)
        except BrokenPipeError:  # the Ctrl-C took the reader too (`… 2>&1 | cat`): the code must still be 130
            from arreio.cli.render import silence

            silence(sys.stderr)
    return int(summary["exit_code"])


def _backend(request: BatchRequest, config: Any, deps_factory: Any) -> Any:
    if request.ray is not None:
        from arreio.engine.batch.ray_backend import RayBackend

        address = None if request.ray == "local" else request.ray
        return RayBackend(address, deps_factory, config.ray, retries=config.retries, in_flight=request.jobs)
    from arreio.engine.batch.workers import LocalWorkers

    return LocalWorkers(request.jobs or config.workers, deps_factory, retries=config.retries)


def _learn(folder: Any, settings: Any, cwd: Path, state: Path) -> dict[str, Any]:
    from arreio.cli.deps import pipeline_deps
    from arreio.engine.batch.learning import learn_from_batch
    from arreio.engine.core.ports import SystemClock
    from arreio.engine.tools.run_context import RunContext

    deps = pipeline_deps()
    ctx = RunContext(
        cwd=cwd,
        settings=settings,
        clock=SystemClock(),
        env=process_env(),
        state_dir=state,
        provider_factory=deps.provider_factory,
    )
    return asyncio.run(learn_from_batch(folder, deps.learning, ctx=ctx))

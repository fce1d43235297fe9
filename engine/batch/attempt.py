"""One attempt of one task: an isolated run through the one conveyor, and the result row it leaves.

The attempt's folder (`out_dir`) is the run's own state folder (`ARREIO_HOME`): sessions, the run's
report and events, audit, memory — seeded with the driver's config and memory, so the attempt runs
under the same settings, policy and lessons as a plain `arreio run` there. The workdir is copied to
a fresh temporary folder (the suite's own copy is never touched), the task's `setup` runs in the
copy, then the run: unattended, so an approval is decided by policy and a pause is a failed attempt
with its reason. The copy is removed afterwards, and with it the checkpoints that described it and
whatever the setup left running (workcopy.py: also when the worker dies first).

`run_attempt` never raises for what an attempt can meet (setup failing, a bad model, a timeout, a
bug in a tool): it is a row with `verdict` and `message`. Only a worker's own death loses an attempt,
and the scheduler retries those. A local worker told to stop (`stop_on_sigterm`: the batch is
cancelled) ends its attempt the way Ctrl-C ends a run and raises `Stopped`: no row, nothing left.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arreio.engine.batch.suite import Task
from arreio.engine.batch.workcopy import WorkCopy, clean, held
from arreio.engine.core.errors import ArreioError, Cancelled
from arreio.engine.core.ids import iso_ms
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.ports import Clock, SystemClock, process_env
from arreio.engine.core.regular_file import Limit, read_bytes

ROW_VERSION = 1
SEEDS = ("config.yaml", "MEMORY.md", "USER.md", "instructions.json")  # what an attempt's state folder starts with
_SETUP_TAIL = 300  # chars of a failed setup's output quoted in the row


@dataclass(frozen=True)
class AttemptSpec:
    """What a worker needs to run one attempt. Picklable: it crosses a process (or a Ray node)."""

    task: Task
    attempt: int  # 1-based
    out_dir: Path  # the attempt's state folder on the machine that runs it
    rel: str  # the same folder relative to the batch folder ("attempts/<task>/<n>"), for the row's paths
    model: str | None = None  # --model / --offline: overrides the task's model (never a script's or cassette's)
    replay: Path | None = None  # --replay DIR: this task's cassette
    record: bool = False  # --record DIR: record into `<out_dir>/cassette.jsonl` (the driver files it)
    seeds: Mapping[str, bytes] = field(default_factory=dict)  # SEEDS' contents, from the driver's state folder
    env: Mapping[str, str] | None = None  # None: this process's environment
    tries: int = 1  # which try this is (a worker that died mid-attempt is retried)

    @property
    def key(self) -> tuple[str, int]:
        return (self.task.id, self.attempt)


class Stopped(BaseException):  # a signal, like KeyboardInterrupt, not an error
    """The worker running the attempt was told to stop (SIGTERM, after `stop_on_sigterm`): the attempt
    was cancelled, its processes killed and its copy removed; it leaves no row (a resume runs it)."""


def _stop(signum: int, frame: Any) -> None:
    raise Stopped


def stop_on_sigterm() -> None:
    """For a process that only runs attempts (a local worker): from now on SIGTERM stops the attempt
    that runs — the setup's process group killed, the run cancelled as Ctrl-C cancels one (its gate
    commands and tool processes killed, its report landed), the copy removed — and `run_attempt`
    (or whatever waits between attempts) raises `Stopped`."""
    signal.signal(signal.SIGTERM, _stop)


def read_seeds(state: Path) -> dict[str, bytes]:
    """The driver's config and memory files (the ones that exist), for every attempt to start from."""
    seeds = {}
    for name in SEEDS:
        try:
            seeds[name] = read_bytes(state / name, limit=Limit.MEMORY)
        except OSError:  # none, or one a run could not read either: the attempt starts without it
            continue
    return seeds


def run_attempt(spec: AttemptSpec, deps_factory: Callable[[], Any], clock: Clock | None = None) -> dict[str, Any]:
    """Run the attempt to its end and return its result row (see `blank_row` for the fields). `clock`
    stamps the row (the real one by default)."""
    clock = clock or SystemClock()
    t0 = time.monotonic()
    row = blank_row(spec, clock)
    out = spec.out_dir
    clean(out)  # a try that died, or a batch killed halfway, may have left its copy and setup running
    if out.exists():  # start clean
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name, data in spec.seeds.items():
        (out / name).write_bytes(data)
    env = dict(process_env() if spec.env is None else spec.env)
    env["ARREIO_HOME"] = str(out)
    copy = WorkCopy(out, spec.task.id)
    try:
        if spec.task.workdir is not None and not _fill(copy, spec.task.workdir, row):
            return _finish(row, t0, clock)
        if spec.task.setup and not _setup(spec, copy, out, env, row):
            return _finish(row, t0, clock)
        asyncio.run(_run(spec, copy.path, env, deps_factory, row))
    except Exception as error:  # noqa: BLE001 - a bug below is this attempt's failure, not the batch's
        row.update(verdict="error", exit_code=1, message=f"internal error: {type(error).__name__}: {error}")
    finally:
        with held():
            copy.remove()
            shutil.rmtree(out / "checkpoints", ignore_errors=True)  # they described the copy just removed
    return _finish(row, t0, clock)


def blank_row(spec: AttemptSpec, clock: Clock | None = None) -> dict[str, Any]:
    """A result row before the run fills it in (also the row of an attempt lost with its worker)."""
    return {
        "version": ROW_VERSION,
        "task": spec.task.id,
        "attempt": spec.attempt,
        "verdict": "error",
        "passed": False,
        "exit_code": 1,
        "message": "",
        "gates": [],
        "steps": 0,
        "tool_calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
        "cost_usd": 0.0,
        "cache_share": 0.0,
        "duration_s": 0.0,
        "setup_s": 0.0,
        "run_s": 0.0,
        "model": None,
        "session": None,
        "report": None,
        "run_id": None,
        "started_at": iso_ms((clock or SystemClock()).now()),
        "ended_at": None,
        "tries": spec.tries,
        "worker": None,
        "warnings": [],
    }


def _finish(row: dict[str, Any], t0: float, clock: Clock) -> dict[str, Any]:
    row["duration_s"] = round(time.monotonic() - t0, 3)
    row["ended_at"] = iso_ms(clock.now())
    row["passed"] = row["verdict"] == "success"
    return row


def _fill(copy: WorkCopy, workdir: Path, row: dict[str, Any]) -> bool:
    """The workdir into the copy; what could not be copied is in the row's `warnings` (a named pipe) or
    fails the attempt with the reason (a file that cannot be read)."""
    try:
        copy.fill(workdir)
    except shutil.Error as error:
        failures = error.args[0] if error.args and isinstance(error.args[0], list) else []
        first = failures[0][2] if failures and len(failures[0]) == 3 else str(error)
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        row.update(verdict="error", exit_code=1, message=f"the workdir could not be copied: {first}{more}")
        return False
    finally:
        row["warnings"] += [f"workdir: {skipped}" for skipped in copy.skipped]
    return True


def _setup(spec: AttemptSpec, copy: WorkCopy, out: Path, env: dict[str, str], row: dict[str, Any]) -> bool:
    """The task's `setup` in the copy; its output goes to `setup.log`. False (and the row says why) when it failed."""
    t0 = time.monotonic()
    log = out / "setup.log"
    setup_env = {k: v for k, v in env.items() if k != "ARREIO_HOME"}
    code = copy.run(spec.task.setup or "", env=setup_env, log=log, timeout=spec.task.setup_timeout_s)
    why = f"timed out after {spec.task.setup_timeout_s:g} s" if code is None else f"exit {code}"
    row["setup_s"] = round(time.monotonic() - t0, 3)
    if code == 0:
        return True
    tail = " ".join(_tail(log).split())
    row.update(verdict="error", exit_code=1, message=f"setup failed ({why}){f': {tail}' if tail else ''}")
    return False


def _options(spec: AttemptSpec, work: Path, env: dict[str, str]) -> Any:
    from arreio.engine.run.pipeline import RunOptions

    task = spec.task
    plan = None
    if task.gates:  # the task's gates are a plan's: one unit, then them (JSON is YAML)
        plan = spec.out_dir / "plan.yaml"
        plan.write_text(
            json.dumps(
                {"version": 1, "units": [{"id": task.id, "goal": task.goal}], "gates": list(task.gates)}, indent=1
            )
            + "\n",
            encoding="utf-8",
        )
    replay = task.cassette or spec.replay
    scripted = task.script is not None or replay is not None
    return RunOptions(
        goal_text=None if plan else task.goal,
        plan=plan,
        model=None if scripted else (spec.model or task.model),
        script=None if replay else task.script,
        replay=replay,
        record=spec.out_dir / "cassette.jsonl" if spec.record else None,
        max_steps=task.max_steps,
        tools=list(task.tools) if task.tools is not None else None,
        cwd=work,
        env=env,
        unattended=True,
    )


async def _run(
    spec: AttemptSpec, work: Path, env: dict[str, str], deps_factory: Callable[[], Any], row: dict[str, Any]
) -> None:
    from arreio.engine.run.pipeline import run_pipeline

    t0 = time.monotonic()
    options = _options(spec, work, env)
    gates: list[dict[str, Any]] = row["gates"]
    done: Any = None
    timer: Any = None
    with _sigterm_cancels():
        try:
            async with asyncio.timeout(spec.task.timeout_s) as timer:
                async for event in run_pipeline(options, deps_factory()):
                    if event.type == "run_start":
                        row.update(
                            run_id=event.run_id,
                            model=event.model,
                            session=f"{spec.rel}/sessions/{event.session_id}.jsonl",
                        )
                    elif event.type == "gate_result" and event.agent is None:
                        gates.append({"gate": event.gate, "passed": event.passed, "detail": event.detail})
                    elif event.type == "done" and event.agent is None:
                        done = event
        except (TimeoutError, Cancelled, asyncio.CancelledError):
            if timer is None or not timer.expired():
                raise
            row.update(verdict="timeout", exit_code=1, message=f"timed out after {spec.task.timeout_s:g} s")
            done = None  # the stream's last word is the cancel the timeout made: the row says timeout
        except ArreioError as error:  # bad input met at the edge (an unknown model, a bad plan): this attempt's
            row.update(verdict="error", exit_code=error.exit_code, message=error.message)
    row["run_s"] = round(time.monotonic() - t0, 3)
    report = _report(spec, row)
    if done is not None:
        message = _unanswerable(done.message) if done.verdict == "paused" else done.message
        row.update(
            verdict=done.verdict,
            exit_code=done.exit_code,
            message=message,
            steps=done.steps,
            tool_calls=done.tool_calls,
            input_tokens=done.input_tokens,
            output_tokens=done.output_tokens,
            cost_usd=done.cost_usd,
            cache_share=done.cache_share or 0.0,
        )
    if report:
        row["cached_tokens"] = int(report.get("cache_read_tokens") or 0)
        row["cache_write_tokens"] = int(report.get("cache_write_tokens") or 0)
        if done is None:  # a timeout: the report the pipeline landed on its way out has the counters
            for key in ("steps", "tool_calls", "input_tokens", "output_tokens", "cost_usd", "cache_share"):
                row[key] = report.get(key, row[key])


# What a paused attempt's row says instead of the run's `arreio approve ID`: the attempt's session lives
# in the batch folder and its workdir copy is gone, so that command could not work.
BATCH_PAUSE = (
    "nobody can approve it inside a batch: allow it in the config's `governance.policy`, or run "
    "this task on its own with `arreio run`"
)


def _unanswerable(message: str) -> str:
    return message.split(" — approve with ", 1)[0] + " — " + BATCH_PAUSE


@contextmanager
def _sigterm_cancels() -> Iterator[None]:
    """Inside a stoppable worker's run (`stop_on_sigterm`), SIGTERM cancels the run's task — a cancel is
    what a run cleans up after (a raise in the middle of the loop is not) — and `Stopped` comes out
    of it instead of the cancel. Elsewhere (a Ray worker) it changes nothing."""
    if signal.getsignal(signal.SIGTERM) is not _stop:
        yield
        return
    loop, task = asyncio.get_running_loop(), asyncio.current_task()
    assert task is not None
    told: list[bool] = []

    def cancel() -> None:
        told.append(True)
        task.cancel()

    with held():
        loop.add_signal_handler(signal.SIGTERM, cancel)
    try:
        yield
    except (Cancelled, asyncio.CancelledError):
        if not told:
            raise
    finally:
        with held():  # a SIGTERM from here on is `_stop`'s again (the loop's removal would make it fatal)
            loop.remove_signal_handler(signal.SIGTERM)
            signal.signal(signal.SIGTERM, _stop)
    if told:  # (also when the run took the cancel and ended on its own)
        raise Stopped


def _tail(log: Path) -> str:
    """The last `_SETUP_TAIL` characters of a setup's log, however much it wrote."""
    try:
        with open(log, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - _SETUP_TAIL * 4))
            return handle.read().decode("utf-8", "replace")[-_SETUP_TAIL:]
    except OSError:
        return ""


def _report(spec: AttemptSpec, row: dict[str, Any]) -> dict[str, Any] | None:
    if not row.get("run_id"):
        return None
    path = spec.out_dir / "runs" / row["run_id"] / "report.json"
    try:
        report = json_loads(read_bytes(path, limit=Limit.RECORD))
    except (OSError, ValueError):
        return None
    row["report"] = f"{spec.rel}/runs/{row['run_id']}/report.json"
    return report

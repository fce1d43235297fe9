"""What runs next, and when to stop starting: the batch's one loop over a backend (local workers or
Ray — the same contract: `start`, `free`, `submit`, `poll`, `busy`, `running`, `close`).

Attempts are generated lazily, attempt-major (every task's attempt 1, then every task's attempt 2),
so a budget that stops the batch early leaves even coverage. Each finished row is appended to
`results.jsonl` at once; the driver keeps running sums, never the rows. A budget (`max_cost_usd`,
`max_tokens`: input + output) counts every finished row, a resumed batch's earlier ones included;
once reached, nothing new starts, what runs finishes, and the batch ends `stopped` (exit 4).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arreio.engine.batch.attempt import AttemptSpec
from arreio.engine.batch.results import BatchFolder
from arreio.engine.batch.suite import Task
from arreio.engine.batch.summary import Totals

TICK_S = 0.25  # how often the live view is refreshed while nothing finishes


class Backend(Protocol):
    name: str

    def start(self) -> None: ...
    def free(self) -> int: ...
    def busy(self) -> int: ...
    def submit(self, spec: AttemptSpec) -> None: ...
    def poll(self, timeout: float) -> list[dict[str, Any]]: ...
    def running(self) -> list[tuple[AttemptSpec, float]]: ...
    def close(self, *, kill: bool = False) -> None: ...


@dataclass(frozen=True)
class Budget:
    max_cost_usd: float | None = None
    max_tokens: int | None = None

    def reached(self, totals: Totals) -> str | None:
        """Why the batch must stop starting attempts, or None."""
        if self.max_cost_usd is not None and totals.cost_usd >= self.max_cost_usd:
            return f"budget reached: ${totals.cost_usd:.4f} spent of --max-cost ${self.max_cost_usd:g}"
        if self.max_tokens is not None and totals.tokens >= self.max_tokens:
            return f"budget reached: {totals.tokens:,} tokens of --max-tokens {self.max_tokens:,}"
        return None


@dataclass(frozen=True)
class Update:
    """What the scheduler tells its view: an attempt `started`, one `finished` (with its row), or a
    `tick` while nothing changed (the view redraws elapsed times)."""

    kind: str
    spec: AttemptSpec | None = None
    row: dict[str, Any] | None = None


@dataclass
class Attempts:
    """The attempts a batch runs: tasks × 1..repeat, minus those already finished (a resume)."""

    folder: BatchFolder
    tasks: list[Task]
    repeat: int
    make: Callable[[Task, int, Path, str], AttemptSpec]  # (task, n, attempt folder, its path in the batch)
    finished: set[tuple[str, int]] = field(default_factory=set)

    @property
    def planned(self) -> int:
        return len(self.tasks) * self.repeat

    def __iter__(self) -> Iterator[AttemptSpec]:
        for n in range(1, self.repeat + 1):
            for task in self.tasks:
                if (task.id, n) not in self.finished:
                    yield self.make(task, n, self.folder.attempt_dir(task.id, n), f"attempts/{task.id}/{n}")


@dataclass
class Scheduler:
    folder: BatchFolder
    backend: Backend
    budget: Budget = field(default_factory=Budget)
    totals: Totals = field(default_factory=Totals)  # rows finished before (a resume) are added first
    record_dir: Path | None = None  # --record DIR: each attempt's cassette is filed there
    repeat: int = 1
    stopped: str | None = None

    def run(self, attempts: Iterator[AttemptSpec]) -> Iterator[Update]:
        """Run every attempt (or until the budget stops new ones), yielding what happens."""
        self.stopped = self.budget.reached(self.totals)
        pending = iter(attempts)
        exhausted = False
        self.backend.start()
        try:
            while True:
                while not self.stopped and not exhausted and self.backend.free() > 0:
                    spec = next(pending, None)
                    if spec is None:
                        exhausted = True
                        break
                    self.backend.submit(spec)
                    yield Update("started", spec=spec)
                if self.backend.busy() == 0 and (exhausted or self.stopped):
                    return
                rows = self.backend.poll(TICK_S)
                for row in rows:
                    self.folder.append(row)
                    self.totals.add(row)
                    self._file_cassette(row)
                    yield Update("finished", row=row)
                    self.stopped = self.stopped or self.budget.reached(self.totals)
                if not rows:
                    yield Update("tick")
        except BaseException:
            self.backend.close(kill=True)
            raise
        finally:
            self.backend.close()

    def _file_cassette(self, row: dict[str, Any]) -> None:
        if self.record_dir is None:
            return
        made = self.folder.attempt_dir(row["task"], int(row["attempt"])) / "cassette.jsonl"
        if made.is_file():
            name = (
                f"{row['task']}.cassette.jsonl"
                if self.repeat == 1
                else f"{row['task']}.{row['attempt']}.cassette.jsonl"
            )
            self.record_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(made, self.record_dir / name)

"""A batch on disk: `.arreio/batches/<id>/` (docs/architecture.md section 7).

```
batch.json        {version, id, suite, created_at, options}: what was asked (a resume reads it back)
results.jsonl     one row per finished attempt, appended whole (one line, flushed, fsynced) as it lands
summary.json      the final (or partial) summary, rewritten atomically
learned.jsonl     attempts the --learn pass has learned from (a resume never learns from them again)
attempts/<task>/<n>/   each attempt's state folder: sessions/, runs/<run-id>/{report.json,events.jsonl}, …
```
The driver never holds the rows: they are streamed to disk and read back, one at a time, for the
summary and for a resume. A torn last line (a driver killed mid-write) is skipped; every earlier row
stays. One driver at a time holds the batch (an advisory lock on `.lock`).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arreio.engine.batch.workcopy import LEDGER, clean
from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.errors import UsageError
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.regular_file import Limit, TooLarge, open_regular, read_bytes

BATCH_VERSION = 1


class BatchFolder:
    """One batch's folder, held by this process while open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.results = path / "results.jsonl"
        self._lock: Any = None
        self._sink: Any = None

    @property
    def id(self) -> str:
        return self.path.name

    # -- lifecycle -------------------------------------------------------------------------------
    @classmethod
    def create(cls, root: Path, batch_id: str, meta: dict[str, Any]) -> BatchFolder:
        folder = cls(root / batch_id)
        folder.path.mkdir(parents=True, exist_ok=False)
        folder._hold()
        write_atomic(
            folder.path / "batch.json",
            json.dumps({"version": BATCH_VERSION, "id": batch_id, **meta}, indent=2, ensure_ascii=False) + "\n",
        )
        return folder

    @classmethod
    def open(cls, root: Path, batch_id: str) -> BatchFolder:
        """An existing batch (an id or a unique prefix of one), for `--resume`."""
        # a prefix, not a glob: `--resume '**'` or an absolute path must not reach Path.glob
        found = (
            sorted(p for p in root.iterdir() if p.name.startswith(batch_id) and (p / "batch.json").is_file())
            if root.is_dir() and batch_id
            else []
        )
        exact = [p for p in found if p.name == batch_id]
        if exact:
            found = exact
        if not found:
            raise UsageError(f"no batch {batch_id} in {root} (`ls {root}` lists them)")
        if len(found) > 1:
            raise UsageError(f"batch id {batch_id} is ambiguous: {', '.join(p.name for p in found[:5])}")
        folder = cls(found[0])
        folder._hold()
        for ledger in folder.path.glob(f"attempts/*/*/{LEDGER}"):  # a driver killed outright left them
            clean(ledger.parent)
        return folder

    def _hold(self) -> None:
        handle = open(self.path / ".lock", "a+b")  # noqa: SIM115 - held until close()
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise UsageError(f"batch {self.id} is being run by another arreio process") from None
        self._lock = handle

    def close(self) -> None:
        if self._sink is not None:
            self._sink.close()
            self._sink = None
        if self._lock is not None:
            self._lock.close()  # closing the descriptor releases the lock
            self._lock = None

    def meta(self) -> dict[str, Any]:
        try:
            data = json_loads(read_bytes(self.path / "batch.json", limit=Limit.RECORD))
        except OSError as error:
            raise UsageError(f"batch {self.id}: batch.json is unreadable ({error.strerror or error})") from None
        except ValueError as error:
            raise UsageError(f"batch {self.id}: batch.json is unreadable ({error})") from None
        if not isinstance(data, dict):
            raise UsageError(f"batch {self.id}: batch.json is not a batch record")
        if int(data.get("version", 0)) > BATCH_VERSION:
            raise UsageError(f"batch {self.id} was made by a newer arreio (version {data.get('version')})")
        return data

    def update_meta(self, **changes: Any) -> None:
        data = {**self.meta(), **changes}
        write_atomic(self.path / "batch.json", json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    # -- rows ------------------------------------------------------------------------------------
    def append(self, row: dict[str, Any]) -> None:
        """One whole line, flushed and fsynced: a batch killed right after still has this row."""
        if self._sink is None:
            self._sink = open(self.results, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the batch
        self._sink.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._sink.flush()
        os.fsync(self._sink.fileno())

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every finished attempt's row, streamed; a torn or foreign line is skipped."""
        return read_rows(self.results)

    def finished(self) -> set[tuple[str, int]]:
        """(task, attempt) of every attempt with a row: a resume does not run them again."""
        return {(row["task"], int(row["attempt"])) for row in self.rows()}

    def attempt_dir(self, task: str, attempt: int) -> Path:
        return self.path / "attempts" / task / str(attempt)

    def write_summary(self, summary: dict[str, Any]) -> Path:
        path = self.path / "summary.json"
        write_atomic(path, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        return path

    # -- what --learn has used -------------------------------------------------------------------
    def learned(self) -> set[tuple[str, int]]:
        return {(row["task"], int(row["attempt"])) for row in read_rows(self.path / "learned.jsonl")}

    def mark_learned(self, record: dict[str, Any]) -> None:
        with open(self.path / "learned.jsonl", "a", encoding="utf-8") as sink:
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
            sink.flush()
            os.fsync(sink.fileno())


def read_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a results (or learned) file, streamed. A file that is not a regular one, or is
    past `Limit.JOURNAL`, is a UsageError (a pipe is not waited on, /dev/zero not read for ever)."""
    try:
        fd, info = open_regular(path)
    except FileNotFoundError:
        return
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    if info.st_size > Limit.JOURNAL:
        os.close(fd)
        raise UsageError(f"cannot read {path}: {TooLarge(info.st_size, Limit.JOURNAL).strerror}")
    with open(fd, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                row = json_loads(line)
            except ValueError:
                continue  # a torn last line of a killed driver
            if isinstance(row, dict) and "task" in row and "attempt" in row:
                yield row

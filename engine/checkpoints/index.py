"""`<state>/checkpoints/index.jsonl`: which checkpoint belongs to which run, step and calls.

One JSON line per record, appended under an exclusive lock and fsynced (docs/architecture.md invariant 2), so a
checkpoint taken before a call is on disk before the call runs — a run SIGKILLed mid-round can still
be undone. Two kinds of line, both carrying `"v": 2`:

`{"v":2,"type":"checkpoint","id":"ck-…","commit":"…","tree":"…","worktree":"/abs/cwd","run_id":"run-…",
  "session_id":"…","step":3,"phase":"start|before|after","at":"…","skipped":{path:[size,mtime_ns,why]},
  "before":"ck-…","calls":[{"id":"call_2_0","name":"shell"}],"changes":{"created":[…],…}}`
(`before`, `calls`, `changes` on an `after` line: the round it closes) and, once a run ends,
`{"v":2,"type":"end","run_id":…,"worktree":…,"source":"run|undo","before":"ck-…","after":"ck-…",
  "changes":{…},"skipped":[…],"undid":"run-…|ck-…"}` — an undo is recorded as a run of its own
(`source: undo`), so it can be undone in turn. A run without an `end` line did not finish (killed).

Format 2: the paths a line names (`changes`, `skipped`, `calls`) are for people and pass through the
run's redactor, like every file arreio keeps (a file named after a secret is written as its label).
Nothing reads a path back from here to act on it: undo and diff read the trees (git keeps the real
names there) and the real `skipped` of a checkpoint from its commit (`skipped_of`). Format-1 lines
held real names, and are read as such.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.errors import UsageError
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.regular_file import Limit, NotRegularFile, UnfitFile, kind, read_bytes

INDEX_VERSION = 2
_READ = (1, 2)  # versions this arreio reads
FILE_NAME = "index.jsonl"
SKIPPED_LINE = "arreio-skipped: "  # in a checkpoint commit's message: what it left out, real names (JSON)


@dataclass
class RunRecord:
    """Everything the index holds about one run (or one undo) in one working tree, in order."""

    run_id: str
    worktree: str
    session_id: str = ""
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None

    @property
    def source(self) -> str:
        return (self.end or {}).get("source") or ("undo" if self.run_id.startswith("undo-") else "run")

    @property
    def first(self) -> dict[str, Any]:
        return self.checkpoints[0]

    @property
    def last(self) -> dict[str, Any]:
        return self.checkpoints[-1]

    @property
    def closed(self) -> bool:
        return self.end is not None

    @property
    def at(self) -> str:
        return str(self.first.get("at", ""))

    def rounds(self) -> list[dict[str, Any]]:
        """The `after` lines: one per round that changed something, with its step and calls."""
        return [c for c in self.checkpoints if c.get("phase") == "after"]


class Redacting(Protocol):
    def text(self, text: str) -> str: ...


class CheckpointIndex:
    def __init__(self, state_dir: Path, *, durable: bool = True, redactor: Redacting | None = None) -> None:
        self.path = state_dir / "checkpoints" / FILE_NAME
        self.durable = durable  # the run's `fsync`
        self.redactor = redactor  # the run's: the names a line shows pass through it

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Append one record (whole line, written and, when durable, fsynced) and return it as written
        (its names redacted)."""
        line = {"v": INDEX_VERSION, **self._shown(record)}
        # ASCII escapes: a file name that is not UTF-8 (kept as surrogates) still makes a valid line
        data = (json.dumps(line, separators=(",", ":")) + "\n").encode()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            info = os.fstat(fd)
            if (found := kind(info.st_mode)) is not None:  # a FIFO would block the writer once full
                raise NotRegularFile(found)
            size = info.st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # after a torn line (a killed writer) ours starts on a line of its own
            os.write(fd, data)
            if self.durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        return line

    def records(self) -> list[dict[str, Any]]:
        """Every readable record of a version we know; a torn or foreign line is skipped."""
        try:
            data = read_bytes(self.path, limit=Limit.JOURNAL)
        except FileNotFoundError:
            return []
        except UnfitFile as error:
            raise UsageError(f"cannot read the checkpoint index: {error.because(str(self.path))}") from None
        out = []
        for raw in data.split(b"\n"):
            try:
                record = json_loads(raw)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("v") in _READ and record.get("type") in ("checkpoint", "end"):
                out.append(record)
        return out

    def _shown(self, record: dict[str, Any]) -> dict[str, Any]:
        """The names a line shows (paths, call ids and tools), through the redactor."""
        hide = self.redactor.text if self.redactor is not None else None
        if hide is None:
            return record
        out = dict(record)
        if isinstance(out.get("changes"), dict):
            out["changes"] = {kind: [hide(p) for p in paths] for kind, paths in out["changes"].items()}
        skipped = out.get("skipped")
        if isinstance(skipped, dict):
            out["skipped"] = {hide(p): why for p, why in skipped.items()}
        elif isinstance(skipped, list):
            out["skipped"] = [hide(p) for p in skipped]
        if isinstance(out.get("calls"), list):
            out["calls"] = [{k: hide(v) if isinstance(v, str) else v for k, v in c.items()} for c in out["calls"]]
        return out

    def runs(self, worktree: str | None = None) -> list[RunRecord]:
        """Runs (and undos) that took checkpoints, oldest first; only `worktree`'s when given."""
        runs: dict[tuple[str, str], RunRecord] = {}
        for record in self.records():
            if worktree is not None and record.get("worktree") != worktree:
                continue
            key = (str(record.get("run_id", "")), str(record.get("worktree", "")))
            run = runs.setdefault(key, RunRecord(run_id=key[0], worktree=key[1]))
            run.session_id = run.session_id or str(record.get("session_id") or "")
            if record["type"] == "checkpoint":
                run.checkpoints.append(record)
            else:
                run.end = record
        return [run for run in runs.values() if run.checkpoints]

    def checkpoints(self, worktree: str | None = None) -> list[dict[str, Any]]:
        return [
            r
            for r in self.records()
            if r["type"] == "checkpoint" and (worktree is None or r.get("worktree") == worktree)
        ]

    def rewrite(self, keep: Callable[[dict[str, Any]], bool]) -> int:
        """Keep only the records `keep` accepts (a prune); returns how many were dropped. Atomic: a
        crash leaves the old index or the new one. The caller holds the store's lock."""
        records = self.records()
        kept = [r for r in records if keep(r)]
        if len(kept) != len(records):
            body = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in kept)
            write_atomic(self.path, body, durable=self.durable)
        return len(records) - len(kept)


def skipped_line(skipped: dict[str, list]) -> str:
    """The line a checkpoint commit's message carries for what the snapshot left out (real names)."""
    return SKIPPED_LINE + json.dumps(skipped, separators=(",", ":")) if skipped else ""


def skipped_of(record: dict[str, Any], message: Callable[[str], bytes]) -> dict[str, list]:
    """What a checkpoint left out, by real name: from its commit's message (`message(commit)`) for a
    format-2 line, from the line itself for a format-1 one."""
    if record.get("v") == 1:
        return dict(record.get("skipped") or {})
    for line in message(str(record.get("commit", ""))).decode("utf-8", "surrogateescape").splitlines():
        if line.startswith(SKIPPED_LINE):
            found = json.loads(line[len(SKIPPED_LINE) :])
            return found if isinstance(found, dict) else {}
    return {}

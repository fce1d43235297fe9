"""The bounded, file-backed memory stores: `.arreio/MEMORY.md` and `.arreio/USER.md`.

One `MemoryStore` per file. Every write takes an exclusive `flock` on a sidecar lock file
(`MEMORY.md.lock`), re-reads the file under the lock (another process may have written since we
last looked), applies the operations in memory (`entries.apply_operations`), and writes a temp
file in the same folder, fsynced, then `os.replace` — so concurrent writers from several processes
lose nothing and a crash leaves either the old file or the new one.

Drift guard: a file edited by hand into something that does not round-trip (a missing separator,
duplicates, empty entries) would be silently normalised by a rewrite. So `replace` and `remove`
refuse on such a file, save a `.bak.<timestamp>` copy and explain; `add` still works and appends
to the text as it is, leaving the hand edit untouched.

No secret is stored: content the redactor would change (an environment value in any spelling, a
token, `password for staging: …`, a docker `auth`) is refused with a reason the writer can act on
(`secret_refusal`), whoever writes — the `memory` tool, the learning pass, `arreio memory add`. A
refusal, not a `[REDACTED]` entry: such an entry would enter every later prompt saying nothing, and
the model, told why, can save where the secret lives instead.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.errors import ConfigError
from arreio.engine.core.file_lock import exclusive
from arreio.engine.core.ports import Clock, SystemClock
from arreio.engine.core.regular_file import Limit, UnfitFile, read_text
from arreio.engine.walls.redact import Redactor
from arreio.memory.entries import (
    JOINER,
    MemoryRefused,
    Operation,
    apply_operations,
    parse_entries,
    render_entries,
    round_trips,
    usage_chars,
    usage_line,
)

Target = Literal["memory", "user"]
TARGETS: tuple[Target, ...] = ("memory", "user")

DEFAULT_MEMORY_CHARS = 2200
DEFAULT_USER_CHARS = 1375


def secret_refusal(content: str, redactor: Redactor) -> str | None:
    """Why `content` may not be stored (it holds a secret the redactor finds), or None."""
    name = redactor.find_name(content)
    if name is None and redactor.text(content) == content:
        return None
    what = (
        f"the value of ${name}, a secret from the environment"
        if name is not None
        else "what looks like a credential (a key, token or password)"
    )
    return (
        f"refused: the content holds {what}. Memory lasts across sessions and enters every prompt; "
        "never store secrets (save where to find one instead: 'the staging DB password is in the vault')."
    )


# A lock the file system will not let arreio make (a read-only or immutable state folder, a full disk).
_DISK_REFUSALS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC})


@dataclass(frozen=True)
class MemoryLimits:
    """Size limits in characters (not tokens), separators included. Config keys:
    `memory.memory_chars` and `memory.user_chars`."""

    memory_chars: int = DEFAULT_MEMORY_CHARS
    user_chars: int = DEFAULT_USER_CHARS

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None) -> MemoryLimits:
        """Read limits from a config mapping (its `memory` section or a flat one); defaults otherwise."""
        section = (settings or {}).get("memory", settings or {})
        if not isinstance(section, Mapping):
            section = {}
        values = {}
        for key in ("memory_chars", "user_chars"):
            if key in section:
                value = section[key]
                if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                    raise ConfigError(f"memory.{key} must be a positive whole number of characters, got {value!r}")
                values[key] = value
        return cls(**values)


@dataclass(frozen=True)
class StoreState:
    """A store as read from disk: its entries, usage, and whether the file round-trips."""

    target: Target
    path: Path
    entries: list[str]
    chars: int
    limit: int
    drifted: bool

    @property
    def usage(self) -> str:
        return usage_line(self.chars, self.limit)

    def summary(self) -> str:
        """`"45% — 990/2200 chars, 5 entries"`."""
        count = len(self.entries)
        return f"{self.usage}, {count} entr{'y' if count == 1 else 'ies'}"


@dataclass(frozen=True)
class WriteResult:
    """The outcome of a successful write (refusals raise `MemoryRefused`)."""

    target: Target
    changed: bool
    state: StoreState
    notes: list[str]


class MemoryStore:
    """One bounded store file. Reads are lock-free (writes are atomic replaces); writes are locked."""

    def __init__(
        self,
        path: Path,
        limit: int,
        *,
        target: Target = "memory",
        clock: Clock | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.path = Path(path)
        self.limit = limit
        self.target = target
        self.clock = clock or SystemClock()
        self.redactor = redactor if redactor is not None else Redactor()  # no environment: the formats alone
        self.lock_path = self.path.with_name(self.path.name + ".lock")

    # -- reading -------------------------------------------------------------------------------
    def read_text(self) -> str:
        try:
            # utf-8-sig: an editor's byte-order mark is not part of the first entry (it was kept by
            # every rewrite, glued to it)
            return read_text(self.path, limit=Limit.MEMORY, encoding="utf-8-sig")
        except FileNotFoundError:
            return ""
        except UnfitFile as error:  # a pipe would block, a device never end: refused before a byte is read
            raise MemoryRefused(f"{error.because(self.path.name)}; fix or move it.") from None
        except UnicodeDecodeError as error:
            raise MemoryRefused(f"{self.path.name} is not valid UTF-8 ({error.reason}); fix or move it.") from None

    def read(self) -> StoreState:
        return self._state(self.read_text())

    def entries(self) -> list[str]:
        return self.read().entries

    def _state(self, text: str) -> StoreState:
        entries = parse_entries(text)
        chars = usage_chars(entries)
        # Not as the store writes it: separators off, or more than it would ever hold (text appended
        # by hand without a `§` line became part of the last entry; a replace of it dropped it all).
        drifted = bool(text.strip()) and (not round_trips(text) or chars > self.limit)
        return StoreState(
            target=self.target, path=self.path, entries=entries, chars=chars, limit=self.limit, drifted=drifted
        )

    # -- writing -------------------------------------------------------------------------------
    def add(self, content: str) -> WriteResult:
        return self.apply([Operation("add", content=content)])

    def replace(self, old_text: str, content: str) -> WriteResult:
        return self.apply([Operation("replace", content=content, old_text=old_text)])

    def remove(self, old_text: str) -> WriteResult:
        return self.apply([Operation("remove", old_text=old_text)])

    def apply(self, operations: Sequence[Operation]) -> WriteResult:
        """Apply all operations atomically under the lock, or refuse them all."""
        with self.locked():
            planned = self.plan(operations)
            self.commit(planned)
        return planned.result

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the exclusive sidecar lock (blocking) for the duration of the block; a lock that
        cannot be taken (a link where it should be, no permission) refuses the write."""
        lock = exclusive(self.lock_path)
        try:
            lock.__enter__()
        except OSError as error:
            if error.errno in _DISK_REFUSALS:  # the file system's own refusal: said as for any write (cli/errors.py)
                raise
            raise MemoryRefused(
                f"cannot lock {self.path.name}: {error.strerror or error}; nothing was changed"
            ) from None
        try:
            yield
        finally:
            lock.__exit__(None, None, None)

    def plan(self, operations: Sequence[Operation]) -> PlannedWrite:
        """Compute (without writing) the result of `operations` on the file as it is now.
        Call under `locked()`; `commit` writes what this returns."""
        for number, op in enumerate(operations, 1):
            refusal = secret_refusal(op.content, self.redactor) if op.content else None
            if refusal is not None:
                where = f"operation {number} ({op.action}): " if len(operations) > 1 else ""
                raise MemoryRefused(where + refusal + (" Nothing was changed." if where else ""))
        text = self.read_text()
        before = self._state(text)
        if before.drifted and any(op.action != "add" for op in operations):
            backup = self._backup(text)
            why = (
                "it holds more than its limit"
                if before.chars > self.limit and round_trips(text)
                else "it no longer round-trips (entries must be separated by a line holding only §, without "
                "duplicates or empty entries)"
            )
            raise MemoryRefused(
                f"{self.path.name} was edited by hand and {why}, so replace/remove would rewrite what was "
                f"written there. A copy was saved to {backup}. Fix the file by hand, or add entries "
                f"(add still works)."
            )
        applied = apply_operations(before.entries, operations, self.limit, label=self.path.name)
        if before.drifted:
            # Only adds reach here: append to the text as it is, so the hand edit survives.
            new_entries = [entry for entry in applied.entries if entry not in before.entries]
            new_text = text.rstrip() + JOINER + JOINER.join(new_entries) + "\n" if new_entries else text
        else:
            new_text = render_entries(applied.entries)
        after = self._state(new_text)
        result = WriteResult(target=self.target, changed=applied.changed, state=after, notes=applied.notes)
        return PlannedWrite(result=result, text=new_text)

    def commit(self, planned: PlannedWrite) -> None:
        """Write a plan made under the same `locked()` block (nothing to do when nothing changed)."""
        if planned.result.changed:
            write_atomic(self.path, planned.text)

    def _backup(self, text: str) -> Path:
        for earlier in sorted(self.path.parent.glob(f"{self.path.name}.bak.*")):  # one copy per version
            try:
                if read_text(earlier, limit=Limit.MEMORY) == text:
                    return earlier
            except (OSError, UnicodeDecodeError):
                continue
        stamp = self.clock.now().strftime("%Y%m%dT%H%M%SZ")
        backup = self.path.with_name(f"{self.path.name}.bak.{stamp}")
        if not backup.exists():
            write_atomic(backup, text)
        return backup


@dataclass(frozen=True)
class PlannedWrite:
    """A computed, not yet written, change: the result to report and the file text to write."""

    result: WriteResult
    text: str


class MemoryStores:
    """The two stores of a state folder: `.memory` (MEMORY.md, the agent's notes) and `.user`
    (USER.md, what it knows about the user)."""

    def __init__(
        self,
        state_dir: Path,
        limits: MemoryLimits | None = None,
        clock: Clock | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.state_dir = Path(state_dir)
        self.limits = limits or MemoryLimits()
        self.redactor = redactor if redactor is not None else Redactor()
        self.memory = MemoryStore(
            self.state_dir / "MEMORY.md", self.limits.memory_chars, target="memory", clock=clock, redactor=self.redactor
        )
        self.user = MemoryStore(
            self.state_dir / "USER.md", self.limits.user_chars, target="user", clock=clock, redactor=self.redactor
        )

    @classmethod
    def configured(
        cls, state_dir: Path, settings: Any, clock: Clock | None = None, redactor: Redactor | None = None
    ) -> MemoryStores:
        """The stores with the limits of `settings.memory` — what runs, the CLI and learning all use;
        `redactor` (the run's, or the environment's) decides what is a secret they refuse."""
        limits = MemoryLimits(memory_chars=settings.memory.memory_chars, user_chars=settings.memory.user_chars)
        return cls(state_dir, limits, clock, redactor)

    def get(self, target: str) -> MemoryStore:
        if target == "memory":
            return self.memory
        if target == "user":
            return self.user
        raise MemoryRefused(f"unknown memory target {target!r}: use 'memory' or 'user'.")

    def apply(self, operations: Mapping[Target, Sequence[Operation]]) -> list[WriteResult]:
        """All-or-nothing across both files: lock both (fixed order, so two writers never deadlock),
        plan every target, and write only when every plan succeeded."""
        targets = [target for target in TARGETS if operations.get(target)]
        with ExitStack() as stack:
            for target in targets:
                stack.enter_context(self.get(target).locked())
            plans = [self.get(target).plan(operations[target]) for target in targets]
            for target, planned in zip(targets, plans):
                self.get(target).commit(planned)
        return [planned.result for planned in plans]

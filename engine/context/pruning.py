"""Pruning old bulky tool results, with a pointer that keeps the model from re-reading.

Before a full compaction, results that are old and large are replaced by a stub. The stub points
FIRST at a distilled record of the work — the work-log entry for that call (what it was, what it
showed), written into the stub itself, and the notes the agent made after it, which stay in the
history — and only THEN at the raw text, saved on disk before it left the history (nothing is
destroyed). A model that finds what it needs in the record has no reason to open the file again.

`WorkLog` is the running, deterministic record of every call this session (`worklog.jsonl` in the
session folder); compaction summaries and stubs both draw on it.
"""

from __future__ import annotations

import json
import os
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arreio.engine.context.artifacts import ArtifactFile, Saved
from arreio.engine.core.messages import Message, ToolCallPart, ToolResultPart
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.regular_file import Limit, read_text

STUB_MARKER = "[pruned to save context:"
_DEFS = re.compile(
    r"^\s*(?:\d+\t)?\s*(?:async\s+def|def|class|function|fn|func|interface|type|struct)\s+([A-Za-z_][\w]*)",
    re.MULTILINE,
)
_HEADING = re.compile(r"^#{1,3}\s+(.+)$", re.MULTILINE)
_DEF_WORDS = ("def", "class", "fn", "func", "interface", "type", "struct")


# -- the work log -------------------------------------------------------------------------------
def digest(call: ToolCallPart, content: str, is_error: bool) -> str:
    """A short, deterministic account of what one call showed (the distilled record)."""
    lines = content.splitlines()
    first = next((ln.strip() for ln in lines if ln.strip()), "")[:140]
    parts = [f"{'ERROR' if is_error else 'ok'}, {len(lines)} lines / {len(content)} chars"]
    # Every `_DEFS` match holds one of these words: text with none of them is not scanned.
    names = list(dict.fromkeys(_DEFS.findall(content))) if any(w in content for w in _DEF_WORDS) else []
    if names:
        parts.append("defines " + ", ".join(names[:25]) + (f" (+{len(names) - 25} more)" if len(names) > 25 else ""))
    heads = _HEADING.findall(content) if "#" in content else []
    if heads:
        parts.append("headings " + "; ".join(h.strip()[:50] for h in heads[:8]))
    if first:
        parts.append(f"first line: {first}")
    return "; ".join(parts)


def call_label(call: ToolCallPart) -> str:
    args = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False)[:80]}"
        for k, v in call.arguments.items()
        if k not in ("content", "new", "old")
    )
    return f"{call.name}({args})"


@dataclass
class LogEntry:
    seq: int
    call_id: str
    label: str
    digest: str

    def render(self) -> str:
        # ASCII (the stub's own words are: see `render_stub`)
        return f"work log #{self.seq}: {self.label} -> {self.digest}"


class WorkLog:
    """Append-only record of every call of the session, kept in memory and on disk."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, LogEntry] = {}
        self.redactor: Any = None  # set by the context feature: the run's one redactor
        self._fd: int | None = None
        self._finalizer: Any = None
        if path is not None and path.is_file():
            try:
                text = read_text(path, limit=Limit.JOURNAL, errors="replace")
            except OSError:  # unreadable: the log starts afresh, as for a new session
                text = ""
            for line in text.splitlines():
                try:
                    data = json_loads(line)
                    entry = LogEntry(int(data["seq"]), str(data["call_id"]), str(data["label"]), str(data["digest"]))
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line after a crash costs one entry, not the log
                self.entries[entry.call_id] = entry

    def record(self, call: ToolCallPart, content: str, is_error: bool) -> LogEntry:
        entry = LogEntry(len(self.entries) + 1, call.id, call_label(call), digest(call, content, is_error))
        self.entries[call.id] = entry
        if self.path is not None:
            line = json.dumps(entry.__dict__, ensure_ascii=False) + "\n"
            if self.redactor is not None:  # a call's arguments are the model's words: a secret may be among them
                line = self.redactor.text(line)
            data = line.encode("utf-8", "surrogatepass")  # a lone surrogate the model sent must not end the turn
            try:
                os.write(self._descriptor(), data)  # one whole line per entry, in one write(2)
            except OSError:  # the folder went away, or a write failed: open afresh once
                self._close()
                os.write(self._descriptor(), data)
        return entry

    def _descriptor(self) -> int:
        """The log's append-only descriptor, kept open between entries (an open and a close
        a call) and closed when the log is dropped."""
        if self._fd is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            self._finalizer = weakref.finalize(self, os.close, self._fd)
        return self._fd

    def _close(self) -> None:
        if self._fd is not None:
            self._finalizer()
            self._fd = None


# -- choosing and stubbing ----------------------------------------------------------------------
def is_stub(part: ToolResultPart) -> bool:
    return part.content.startswith(STUB_MARKER)


def protected_from(messages: list[Message], protect_tail_tokens: float, weigh: Callable[[Message], float]) -> int:
    """Where the protected tail (the most recent `protect_tail_tokens` of history) begins. Pure."""
    protected, tail = len(messages), 0.0
    for i in range(len(messages) - 1, -1, -1):
        tail += weigh(messages[i])
        if tail > protect_tail_tokens:
            break
        protected = i
    return protected


def plan_pruning(
    messages: list[Message],
    protect_tail_tokens: float,
    min_chars: int,
    weigh: Callable[[Message], float],
    exempt: frozenset[str] = frozenset(),
    start: int = 0,
    protected: int | None = None,
) -> list[int]:
    """Indices of results to prune: successful, at least `min_chars`, not a stub already, not from an
    exempt tool, and older than the most recent `protect_tail_tokens` of history. `start`: the
    messages before it are known to hold nothing to prune (an earlier prune went that far);
    `protected`: `protected_from(...)` when the caller has it already. Pure."""
    if protected is None:
        protected = protected_from(messages, protect_tail_tokens, weigh)
    chosen = []
    for i, message in enumerate(messages[start:protected], start=start):
        part = message.tool_result_part
        if (
            part is not None
            and part.status == "ok"
            and not part.is_error
            and len(part.content) >= min_chars
            and not is_stub(part)
            and part.name not in exempt
        ):
            chosen.append(i)
    return chosen


def render_stub(part: ToolResultPart, record: str, covered_by: str, artifact: str) -> str:
    """The stub's own words are ASCII, so the stub of an ASCII result is an ASCII string: one dash
    made every stub a two-byte-per-character string, which the redactor's search, the token
    estimate and the session's encoding each handled at a fraction of the speed."""
    lines = [
        f"{STUB_MARKER} the {len(part.content)}-char result of this call was removed from the conversation.]",
        f"What it showed: {record}",
        covered_by,
        f"Raw text saved at {artifact}; open it only for exact lines the record above and your own notes lack.",
    ]
    return "\n".join(line for line in lines if line)


COVERED = "Your notes after this call, below, carry what you concluded from it."


def sample_stub(message: Message, call: ToolCallPart | None, worklog: WorkLog, path: Path, shown: str) -> Message:
    """The result `message` as `apply_pruning` would leave it, its text in the shared artifacts file
    `path` (`shown` as the stub names it) at made-up lines: what a prune would leave behind, known
    before anything is written (nothing is recorded)."""
    part = message.tool_result_part
    assert part is not None
    place = Saved(path, 1000, 1000 + part.content.count("\n")).where(shown)
    entry = worklog.entries.get(part.call_id)
    if entry is None:
        call = call or ToolCallPart(id=part.call_id, name=part.name)
        entry = LogEntry(
            len(worklog.entries) + 1, part.call_id, call_label(call), digest(call, part.content, part.is_error)
        )
    stub = part.model_copy(update={"content": render_stub(part, entry.render(), COVERED, place)})
    return message.model_copy(update={"parts": [stub]})


def apply_pruning(
    messages: list[Message],
    indices: list[int],
    calls: dict[str, ToolCallPart],
    worklog: WorkLog,
    artifacts: ArtifactFile,
    shown_path: Callable[[Path], str],
    durable: bool = True,
) -> tuple[dict[int, str], list[ToolCallPart]]:
    """Save each chosen result's raw text to the session's artifacts (before it leaves the history:
    durable before this returns when `durable`), then return each index's stub and the calls whose
    results were pruned (the session puts the stubs in: `Session.replace_results`)."""
    stubs: dict[int, str] = {}
    pruned: list[ToolCallPart] = []
    try:
        for i in indices:
            part = messages[i].tool_result_part
            assert part is not None  # plan_pruning only picks results
            saved = artifacts.save(part.call_id, part.name, part.content, durable=durable)
            call = calls.get(part.call_id) or ToolCallPart(id=part.call_id, name=part.name)
            entry = worklog.entries.get(part.call_id) or worklog.record(call, part.content, part.is_error)
            stubs[i] = render_stub(part, entry.render(), COVERED, saved.where(shown_path(saved.path)))
            pruned.append(call)
    finally:
        artifacts.sync(durable)  # one fsync for every text appended above (and the folder, if new)
    return stubs, pruned


READ_TOOLS = ("read_file",)  # a pruned read's path and page are remembered: reading them again is a re-read


def read_key(call: ToolCallPart) -> str:
    """What a read showed: the path and the page, so reading another page is not a re-read."""
    path = str(call.arguments.get("path", "")).removeprefix("./")
    return f"{path}|{call.arguments.get('offset') or ''}|{call.arguments.get('limit') or ''}"


def call_of(messages: list[Message], index: int) -> ToolCallPart | None:
    """The call a result at `index` answers: in the assistant message just before its round."""
    part = messages[index].tool_result_part
    i = index - 1
    while i >= 0 and messages[i].role == "tool":
        i -= 1
    if part is None or i < 0:
        return None
    return next((c for c in messages[i].tool_calls if c.id == part.call_id), None)

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
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arreio.engine.atomic import write_atomic
from arreio.engine.messages import Message, ToolCallPart, ToolResultPart

STUB_MARKER = "[pruned to save context:"
_DEFS = re.compile(r"^\s*(?:\d+\t)?\s*(?:async\s+def|def|class|function|fn|func|interface|type|struct)\s+([A-Za-z_][\w]*)", re.MULTILINE)
_HEADING = re.compile(r"^#{1,3}\s+(.+)$", re.MULTILINE)


# -- the work log -------------------------------------------------------------------------------
def digest(call: ToolCallPart, content: str, is_error: bool) -> str:
    """A short, deterministic account of what one call showed (the distilled record)."""
    lines = content.splitlines()
    first = next((ln.strip() for ln in lines if ln.strip()), "")[:140]
    parts = [f"{'ERROR' if is_error else 'ok'}, {len(lines)} lines / {len(content)} chars"]
    names = list(dict.fromkeys(_DEFS.findall(content)))
    if names:
        parts.append("defines " + ", ".join(names[:25]) + (f" (+{len(names) - 25} more)" if len(names) > 25 else ""))
    heads = _HEADING.findall(content)
    if heads:
        parts.append("headings " + "; ".join(h.strip()[:50] for h in heads[:8]))
    if first:
        parts.append(f"first line: {first}")
    return "; ".join(parts)


def call_label(call: ToolCallPart) -> str:
    args = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False)[:80]}" for k, v in call.arguments.items() if k not in ("content", "new", "old")
    )
    return f"{call.name}({args})"


@dataclass
class LogEntry:
    seq: int
    call_id: str
    label: str
    digest: str

    def render(self) -> str:
        return f"work log #{self.seq}: {self.label} → {self.digest}"


class WorkLog:
    """Append-only record of every call of the session, kept in memory and on disk."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, LogEntry] = {}
        if path is not None and path.is_file():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    data = json.loads(line)
                    entry = LogEntry(int(data["seq"]), str(data["call_id"]), str(data["label"]), str(data["digest"]))
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line after a crash costs one entry, not the log
                self.entries[entry.call_id] = entry

    def record(self, call: ToolCallPart, content: str, is_error: bool) -> LogEntry:
        entry = LogEntry(len(self.entries) + 1, call.id, call_label(call), digest(call, content, is_error))
        self.entries[call.id] = entry
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:  # one whole line per entry
                handle.write(json.dumps(entry.__dict__, ensure_ascii=False) + "\n")
        return entry


# -- choosing and stubbing ----------------------------------------------------------------------
def is_stub(part: ToolResultPart) -> bool:
    return part.content.startswith(STUB_MARKER)


def plan_pruning(
    messages: list[Message], protect_tail_tokens: float, min_chars: int, weigh: Callable[[Message], float],
    exempt: frozenset[str] = frozenset(),
) -> list[int]:
    """Indices of results to prune: successful, at least `min_chars`, not a stub already, not from an
    exempt tool, and older than the most recent `protect_tail_tokens` of history. Pure."""
    protected, tail = len(messages), 0.0
    for i in range(len(messages) - 1, -1, -1):
        tail += weigh(messages[i])
        if tail > protect_tail_tokens:
            break
        protected = i
    chosen = []
    for i, message in enumerate(messages[:protected]):
        part = message.tool_result_part
        if (
            part is not None and part.status == "ok" and not part.is_error and len(part.content) >= min_chars
            and not is_stub(part) and part.name not in exempt
        ):
            chosen.append(i)
    return chosen


def render_stub(part: ToolResultPart, record: str, covered_by: str, artifact: str) -> str:
    lines = [
        f"{STUB_MARKER} the {len(part.content)}-char result of this call was removed from the conversation.]",
        f"What it showed — {record}",
        covered_by,
        f"Raw text saved at {artifact}; open it only for exact lines the record above and your own notes lack.",
    ]
    return "\n".join(line for line in lines if line)


def apply_pruning(
    messages: list[Message],
    indices: list[int],
    calls: dict[str, ToolCallPart],
    worklog: WorkLog,
    artifacts: Path,
    shown_path: Callable[[Path], str],
) -> tuple[list[Message], list[ToolCallPart]]:
    """Save each chosen result's raw text to `artifacts/<call id>.txt` (before it leaves the history),
    then return the new history with stubs and the calls whose results were pruned."""
    out = list(messages)
    pruned: list[ToolCallPart] = []
    for i in indices:
        part = messages[i].tool_result_part
        assert part is not None  # plan_pruning only picks results
        target = artifacts / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', part.call_id)}.txt"
        if not target.exists():
            write_atomic(target, part.content)
        call = calls.get(part.call_id) or ToolCallPart(id=part.call_id, name=part.name)
        entry = worklog.entries.get(part.call_id) or worklog.record(call, part.content, part.is_error)
        covered = "Your notes after this call, below, carry what you concluded from it."
        stub = render_stub(part, entry.render(), covered, shown_path(target))
        out[i] = messages[i].model_copy(update={"parts": [part.model_copy(update={"content": stub})]})
        pruned.append(call)
    return out, pruned

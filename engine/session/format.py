"""The session file's format (docs/architecture.md section 7): its version, the header line, how records are
encoded as lines, and the migrations that carry an older file forward. `file.py` reads and writes it.

Format 1: header, `message`, `run` and other record lines. Format 2 adds `prune` lines;
a format-1 file is read as it is and rewritten as format 2 the first time a prune goes into it.
Format 3: a plan session's header keeps the plan it started with (`plan_spec`), which its resumes
obey instead of the file (which the agent can write). An arreio that reads only up to format 2
would ignore it, so the version says it; a format-1 or 2 file is read as it is (a plan session of
those reads its plan file again, and says so).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from arreio.engine.core.errors import SessionError
from arreio.engine.core.messages import Message
from arreio.engine.core.model_io import SystemBlock
from arreio.engine.session.healing import MESSAGE_LINE_PREFIX, PRUNE, parse_object

__all__ = [
    "CURRENT_VERSION",
    "SessionHeader",
    "ends_with_newline",
    "header_line",
    "json_bytes",
    "json_line",
    "json_of_line",
    "message_line",
    "needs_rewrite",
    "parse_header",
    "prune_record",
    "upgrade",
]

CURRENT_VERSION = 3


class SessionHeader(BaseModel):
    """Line 1 of a session. `system` is the frozen system prompt, so a resume sends the same prefix.
    A version newer than this arreio's is refused on load, so no field a later version added can be
    lost by a rewrite here; unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore")

    version: int = CURRENT_VERSION
    id: str
    created_at: str
    cwd: str
    model: str
    title: str = ""
    system: list[SystemBlock] = []
    script: str | None = None  # the `--script` it was started with: a resume plays on from it
    learn: bool = False  # started with `--learn`: its resumes end with the learning pass too
    plan: str | None = None  # the `--plan` it runs: a resume goes on from the unit where it stopped
    plan_spec: dict[str, Any] | None = None  # that plan as it started (format 3): what a resume runs
    parent: str | None = None  # a sub-agent's session: its parent session's id
    agent: str | None = None  # a sub-agent's session: its name in the event stream ("d1", "d1.d2")
    instructions: list[str] = []  # the project instruction files (AGENTS.md…) its prompt obeys, as shown


# -- migrations ---------------------------------------------------------------------------------
# `_MIGRATIONS[n]` turns one line's record (the header included: type "header") of format n into
# format n+1, one record in, one out. Registering v1 -> v2 here (and bumping CURRENT_VERSION) is all a
# format change needs. Lines that are not JSON objects pass through untouched (the loader reports them).
Migration = Callable[[dict[str, Any]], dict[str, Any]]
# v1 -> v2 adds the `prune` line kind and changes nothing else, so a v1 file reads as it is: it is
# loaded untouched and only rewritten (as v2) the first time a v2 line must go into it.
# v2 -> v3 adds the header's `plan_spec`; a v2 header has none (its plan is read from the file).
_MIGRATIONS: dict[int, Migration] = {1: lambda record: record, 2: lambda record: record}
_COMPATIBLE = {1, 2}  # versions whose files this arreio reads without rewriting them


def upgrade(path: Path, header: dict[str, Any], lines: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SessionError(f"{path}: session header has no valid format version")
    if version > CURRENT_VERSION:
        raise SessionError(
            f"{path}: session was made by a newer arreio (format version {version}; "
            f"this arreio reads up to {CURRENT_VERSION}) — upgrade arreio to open it"
        )
    steps = [_MIGRATIONS.get(v) for v in range(version, CURRENT_VERSION)]
    if None in steps:
        raise SessionError(f"{path}: unknown session format version {version}")
    if not steps or all(v in _COMPATIBLE for v in range(version, CURRENT_VERSION)):
        return header, lines
    records: list[dict[str, Any] | bytes] = [parse_object(line) or line for line in lines]
    for step in steps:
        header = {**step(header), "version": header["version"] + 1}
        records = [step(r) if isinstance(r, dict) else r for r in records]
    return header, [r if isinstance(r, bytes) else json_line(r).rstrip(b"\n") for r in records]


# -- line encoding ------------------------------------------------------------------------------
def json_line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def message_line(message: Message) -> bytes:
    return MESSAGE_LINE_PREFIX + message.model_dump_json().encode()[1:] + b"\n"


def json_bytes(line: bytes) -> bytes:
    """A message line's message JSON, as the line's bytes (what `message_line` wrapped)."""
    return b"{" + line[len(MESSAGE_LINE_PREFIX) : -1]


def json_of_line(line: bytes) -> str:
    """A message line's message JSON, as text."""
    return json_bytes(line).decode("utf-8", "surrogateescape")


# Written only when set, so a header reads as it always has.
_OPTIONAL_HEADER_KEYS = ("script", "learn", "plan", "plan_spec", "parent", "agent")


def header_line(header: SessionHeader) -> bytes:
    data = {"type": "header", **header.model_dump(mode="json")}
    for key in _OPTIONAL_HEADER_KEYS:
        if data.get(key) in (None, False):
            data.pop(key, None)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def needs_rewrite(version: Any) -> bool:
    """A file of this version is written back in the current format before anything is appended."""
    return version not in (CURRENT_VERSION, *_COMPATIBLE)


def parse_header(path: Path, line: bytes) -> dict[str, Any]:
    record = parse_object(line)
    if record is None or record.get("type") != "header":
        raise SessionError(f"{path}: first line is not a session header (not a session, or damaged)")
    return record


def prune_record(messages: list[Message], stubs: dict[int, str]) -> dict[str, Any]:
    """The `prune` line replacing the results at these indices by their stubs (format 2)."""
    entries = []
    for index, content in sorted(stubs.items()):
        part = messages[index].tool_result_part
        if part is None:
            raise ValueError(f"message {index} is not a tool result")
        entries.append({"at": index, "call_id": part.call_id, "content": content})
    return {"type": PRUNE, "results": entries}


def ends_with_newline(path: Path) -> bool:
    """Whether a (non-empty) file's last byte is a newline: an append after a torn line starts afresh."""
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"

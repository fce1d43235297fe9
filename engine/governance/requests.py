"""What the model received: every model call is recoverable from the session.

After each model reply the `RequestRecorder` appends a line to the session, placed right after the
last message the request carried:

    {"type":"request","run_id":…,"at":…,"model":…,"messages":12,"messages_digest":"sha256:…",
     "system_digest":"sha256:…","tools":["read_file",…],"tools_digest":"sha256:…","max_tokens":8192,
     "temperature":null}

and, once per distinct tool set, `{"type":"tools","digest":…,"specs":[…]}` with the full specs. The
system prompt is the session header's (frozen). `reconstruct` rebuilds each request and checks the
digests, so a history rewritten since (compaction) says so instead of pretending.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from arreio.engine.core import events as ev
from arreio.engine.core.ids import iso_ms
from arreio.engine.core.messages import Message
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.regular_file import Limit, read_bytes
from arreio.engine.loop.hooks import RunHook, Turn
from arreio.engine.session.file import Session
from arreio.engine.session.healing import PRUNE, apply_prune
from arreio.engine.walls.audit import digest
from arreio.engine.walls.redact import Redactor

if TYPE_CHECKING:
    from arreio.engine.core.model_io import Usage
    from arreio.engine.core.ports import Clock

REQUEST, TOOLS = "request", "tools"


def messages_digest(messages: list[Message], redactor: Redactor | None = None) -> str:
    """Digest of the messages as the session stores them (redacted), so a reload checks out. The
    session keeps the same digest incrementally (`Session.messages_digest`); this is the full one."""
    text = "\n".join(m.model_dump_json() for m in messages)
    return digest(redactor.text(text) if redactor is not None else text)


class RequestRecorder(RunHook):
    """Writes one `request` line per model call: the request exactly as sent (`Turn.last_request`,
    after every hook's changes — the reserve turn's has no tools)."""

    name = "requests"

    def __init__(self, run_id: str, clock: Clock, redactor: Redactor) -> None:
        self.run_id = run_id
        self.clock = clock
        self.redactor = redactor
        self.previous_model: str | None = None  # the model of the last request before this run
        self._recorded_tools: dict[str, set[Any]] = {}  # session id -> tool-set digests it holds
        self._tool_sets: dict[tuple[int, ...], tuple[list[Any], tuple[list[str], str, list[dict[str, Any]]]]] = {}
        self._system: tuple[list[Any], str] | None = None
        self._names: dict[str, str] = {}  # a model's or a tool's name -> as redacted

    def after_model(self, turn: Turn, usage: Usage) -> list[ev.Event]:
        session = turn.session
        sent = turn.last_request
        if sent is None:  # no model call was made (nothing to record)
            return []
        messages, max_tokens, temperature = sent.messages, sent.max_tokens, sent.temperature
        names, tools_digest, specs = self._tools(sent.tools)
        recorded = self._recorded_tools.get(session.id)
        if recorded is None or tools_digest not in recorded:
            # Once per tool set and session (a resumed session's sets were recorded before; a
            # sub-agent's session is another session).
            recorded = {r.get("digest") for r in session.extra if r.get("type") == TOOLS}
            self._recorded_tools[session.id] = recorded
            if tools_digest not in recorded:
                session.append_record({"type": TOOLS, "digest": tools_digest, "specs": specs}, sync=False)
                recorded.add(tools_digest)
        # The session's own incremental digest when the request is its history (every message is
        # hashed once); the full computation only for a request assembled some other way.
        hashed = session.messages_digest(messages)
        # Not fsynced on its own: the reply appended right after it is, and covers it.
        # Every value is the harness's own (ids, times, digests, numbers) but the model's name and the
        # tools' names, which are redacted here once each: the line needs no scan of its own when the
        # session writes with this redactor (~700 bytes a turn).
        session.append_record(
            {
                "type": REQUEST,
                "run_id": self.run_id,
                "at": iso_ms(self.clock.now()),
                "model": self._clean(turn.model),
                "messages": len(messages),
                "messages_digest": hashed or messages_digest(messages, self.redactor),
                "system_digest": self._system_digest(sent.system),
                "tools": [self._clean(name) for name in names],
                "tools_digest": tools_digest,
                "max_tokens": max_tokens,
                "temperature": temperature,
                "usage": usage.model_dump(),
            },
            sync=False,
            redacted_by=self.redactor,
        )
        return []

    def _clean(self, name: str) -> str:
        clean = self._names.get(name)
        if clean is None:
            clean = self._names[name] = self.redactor.text(name)
        return clean

    def _tools(self, tools: list[Any]) -> tuple[list[str], str, list[dict[str, Any]]]:
        """(names, digest, dumped specs) of a tool list, computed once per distinct list (specs are
        built once per registry, so the same objects come back every turn)."""
        key = tuple(id(t) for t in tools)
        cached = self._tool_sets.get(key)
        if cached is None or any(a is not b for a, b in zip(cached[0], tools)):
            specs = [t.model_dump(mode="json") for t in tools]
            cached = (list(tools), ([s["name"] for s in specs], digest(specs), specs))
            self._tool_sets[key] = cached
        return cached[1]

    def _system_digest(self, system: list[Any]) -> str:
        if (
            self._system is None
            or len(self._system[0]) != len(system)
            or any(a is not b for a, b in zip(self._system[0], system))
        ):
            self._system = (list(system), digest([b.model_dump(mode="json") for b in system]))
        return self._system[1]


def last_request_model(extra: list[dict[str, Any]]) -> str | None:
    for record in reversed(extra):
        if record.get("type") == REQUEST:
            return record.get("model")
    return None


def reconstruct(path: Path) -> list[dict[str, Any]]:
    """Every recorded request of a session file, rebuilt in order: system, messages, tools, params,
    and `exact` (the digests match what was sent)."""

    session, _ = Session.open(path, repair=False)  # header validation and the version check
    session.close()
    system = [b.model_dump(mode="json") for b in session.header.system]
    messages: list[Message] = []
    tool_sets: dict[str, list[dict[str, Any]]] = {}
    out: list[dict[str, Any]] = []
    for line in read_bytes(path, limit=Limit.SESSION).split(b"\n"):  # Session.open read it: a regular file
        try:
            record = json_loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if kind == "message":
            try:
                messages.append(Message.model_validate(record))
            except ValueError:
                continue
        elif kind == PRUNE:  # later requests carried the stubs, earlier ones the whole results
            apply_prune(messages, record)
        elif kind == TOOLS:
            tool_sets[str(record.get("digest"))] = list(record.get("specs") or [])
        elif kind == REQUEST:
            count = int(record.get("messages", 0))
            sent = messages[:count]
            exact = (
                len(sent) == count
                and messages_digest(sent) == record.get("messages_digest")
                and digest(system) == record.get("system_digest")
            )
            out.append(
                {
                    "index": len(out) + 1,
                    "run_id": record.get("run_id"),
                    "at": record.get("at"),
                    "model": record.get("model"),
                    "max_tokens": record.get("max_tokens"),
                    "temperature": record.get("temperature"),
                    "usage": record.get("usage"),
                    "system": system,
                    "messages": [m.model_dump(mode="json") for m in sent],
                    "tools": tool_sets.get(str(record.get("tools_digest")), []),
                    "tool_names": record.get("tools", []),
                    "exact": exact,
                }
            )
    return out

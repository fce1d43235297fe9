"""The cassette: a recorded run's model calls, replayable offline ($0, hermetic) as a regression test.

Format (JSON Lines, version 1; `fixtures/cassettes/` freezes it):

    {"type":"header","format":"arreio-cassette","version":1,"model":"anthropic/…","created_at":"…","arreio":"…"}
    {"type":"call","n":1,"fingerprint":"sha256:…","request":{system,messages,tools,params},
     "events":[…stream events, in order…],"usage":{…},"stop_reason":"tool_use","fault":null}
    …

One `call` line per model call *attempt*: a recorded 429 or a cut stream is a call of its own (its
`fault` set, its events ending in `Done(error=…)`), so replay walks the retry path again.

`fingerprint` hashes the canonical request: sorted-key JSON of the system blocks, the messages, the
tool specs and the parameters, with volatile content normalised (the environment block's date and
platform, the working directory wherever it appears; the session id is left out). `request` keeps a
digest per part (block, message, tool) — never the text — so a mismatch can say *what* changed.
Secrets never enter the file: env values under names that look like keys and common token formats
are redacted from everything written (and from the canonical request before hashing, so record
and replay agree).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.errors import UsageError
from arreio.engine.core.model_io import (
    Done,
    ModelRequest,
    ProviderError,
    SystemBlock,
    TextChunk,
    ThinkingChunk,
    ToolCallDone,
    Usage,
)
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.regular_file import Limit, NotRegularFile, read_text
from arreio.engine.walls.redact import Redactor

FORMAT = "arreio-cassette"
VERSION = 1

# -- the canonical request ------------------------------------------------------------------------

_WORKDIR_LINE = re.compile(r"^- Working directory: (.+)$", re.MULTILINE)
_VOLATILE_LINES = (
    (re.compile(r"^- Date: .*$", re.MULTILINE), "- Date: <date>"),
    (re.compile(r"^- Platform: .*$", re.MULTILINE), "- Platform: <platform>"),
)


def _workdir_pattern(system: list[SystemBlock]) -> re.Pattern[str] | None:
    """The run's working directory (as the environment block names it, and resolved) as a pattern
    that matches it only as a whole path, never as the prefix of a longer name."""
    block = next((b for b in system if b.name == "environment"), None)
    found = _WORKDIR_LINE.search(block.text) if block else None
    if not found:
        return None
    given = found.group(1).strip()
    variants = {given}
    try:
        variants.add(str(Path(given).resolve()))
    except OSError:
        pass
    variants = {v for v in variants if len(v) > 1}  # "/" would eat every slash
    if not variants:
        return None
    alternatives = "|".join(re.escape(v) for v in sorted(variants, key=len, reverse=True))
    return re.compile(rf"(?:{alternatives})(?![\w.-])")


def _walk(value: Any, fn) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: _walk(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, fn) for v in value]
    return value


def canonical_request(request: ModelRequest, redactor: Redactor) -> dict[str, Any]:
    """What the model is asked, without what varies between two identical runs, secrets redacted with
    the cassette's labels (pure)."""
    workdir = _workdir_pattern(request.system)
    system = []
    for block in request.system:
        text = block.text
        if block.name == "environment":
            for pattern, placeholder in _VOLATILE_LINES:
                text = pattern.sub(placeholder, text)
        system.append({"name": block.name, "stable": block.stable, "text": text})
    canonical = {
        "system": system,
        "messages": [m.model_dump(mode="json") for m in request.messages],
        "tools": [t.model_dump(mode="json") for t in request.tools],
        # session_id is left out on purpose: it differs every run and only keys the vendor's cache
        "params": {"model": request.model, "max_tokens": request.max_tokens, "temperature": request.temperature},
    }
    if request.output_schema is not None:  # only when set: cassettes recorded before it still match
        canonical["params"]["output_schema"] = request.output_schema
    if workdir is not None:
        canonical = _walk(canonical, lambda s: workdir.sub("<cwd>", s))
    return redactor.value(canonical)


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _digest(value: Any) -> str:
    return hashlib.sha256(_dumps(value).encode("utf-8")).hexdigest()[:16]


def fingerprint(canonical: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(_dumps(canonical).encode("utf-8")).hexdigest()


class PartDigest(BaseModel):
    """One part of a request: a system block, a message or a tool, by name and content digest."""

    name: str
    digest: str
    chars: int = 0


class RequestDigest(BaseModel):
    system: list[PartDigest] = Field(default_factory=list)
    messages: list[PartDigest] = Field(default_factory=list)
    tools: list[PartDigest] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)


def _describe(message: dict[str, Any]) -> str:
    parts = message.get("parts") or []
    if message.get("role") == "tool":
        names = [p.get("name", "?") for p in parts if p.get("type") == "tool_result"]
        return f"tool result of {', '.join(names) or '?'}"
    if message.get("role") == "assistant":
        calls = [p.get("name", "?") for p in parts if p.get("type") == "tool_call"]
        return "assistant message" + (f" calling {', '.join(calls)}" if calls else "")
    return "user message"


def request_digest(canonical: dict[str, Any]) -> RequestDigest:
    return RequestDigest(
        system=[PartDigest(name=b["name"], digest=_digest(b), chars=len(b["text"])) for b in canonical["system"]],
        messages=[
            PartDigest(name=_describe(m), digest=_digest(m), chars=len(_dumps(m))) for m in canonical["messages"]
        ],
        tools=[PartDigest(name=t["name"], digest=_digest(t), chars=len(_dumps(t))) for t in canonical["tools"]],
        params=dict(canonical["params"]),
    )


def _keyed(parts: list[PartDigest]) -> dict[str, PartDigest]:
    keyed: dict[str, PartDigest] = {}
    for part in parts:
        key, k = part.name, 1
        while key in keyed:  # duplicate names stay distinct
            k += 1
            key = f"{part.name} ({k})"
        keyed[key] = part
    return keyed


def diff_requests(recorded: RequestDigest, current: RequestDigest) -> list[str]:
    """What changed between a recorded request and the current one, in words (pure)."""
    changes: list[str] = []
    rec, cur = _keyed(recorded.system), _keyed(current.system)
    changes += [f"the system prompt gained block '{n}'" for n in cur if n not in rec]
    changes += [f"the system prompt lost block '{n}'" for n in rec if n not in cur]
    changes += [f"the system prompt's block '{n}' differs" for n in cur if n in rec and cur[n].digest != rec[n].digest]
    if not changes and list(rec) != list(cur):
        changes.append("the system prompt's blocks are in a different order")
    rec_t, cur_t = _keyed(recorded.tools), _keyed(current.tools)
    delta = [f"+ {n}" for n in cur_t if n not in rec_t] + [f"- {n}" for n in rec_t if n not in cur_t]
    if delta:
        changes.append(f"tools offered differ: {', '.join(delta)}")
    changes += [
        f"tool '{n}' differs (description or input schema)"
        for n in cur_t
        if n in rec_t and cur_t[n].digest != rec_t[n].digest
    ]
    if not delta and list(rec_t) != list(cur_t):
        changes.append("tools are offered in a different order")
    for key in sorted(set(recorded.params) | set(current.params)):
        before, after = recorded.params.get(key), current.params.get(key)
        if before != after:
            changes.append(f"parameter {key} differs: {before!r} recorded, {after!r} now")
    differing = [
        i for i, (a, b) in enumerate(zip(recorded.messages, current.messages, strict=False)) if a.digest != b.digest
    ]
    first = differing[0] if differing else None
    if first is not None:
        was, now = recorded.messages[first].name, current.messages[first].name
        what = f"({now})" if was == now else f"(recorded: {was}; now: {now})"
        later = len(differing) - 1
        changes.append(f"message {first + 1} {what} differs" + (f", and {later} later one(s)" if later else ""))
    if len(recorded.messages) != len(current.messages):
        changes.append(f"the history holds {len(current.messages)} message(s), {len(recorded.messages)} were recorded")
    return changes


# -- the file -----------------------------------------------------------------------------------

StreamEventField = Annotated[TextChunk | ThinkingChunk | ToolCallDone | Done, Field(discriminator="type")]


class CassetteHeader(BaseModel):
    type: Literal["header"] = "header"
    format: str = FORMAT
    version: int = VERSION
    model: str
    created_at: str = ""
    arreio: str = ""


class CassetteCall(BaseModel):
    """One model call attempt: what was asked (fingerprint + part digests) and what came back."""

    type: Literal["call"] = "call"
    n: int
    fingerprint: str
    request: RequestDigest
    events: list[StreamEventField] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    stop_reason: str | None = None
    fault: ProviderError | None = None

    @property
    def reply_digest(self) -> str:
        return _digest([e.model_dump(mode="json") for e in self.events])


_CALL = TypeAdapter(CassetteCall)


@dataclass
class Cassette:
    path: Path
    header: CassetteHeader
    calls: list[CassetteCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # e.g. a torn last line, skipped


def load_cassette(path: Path) -> Cassette:
    """Read a cassette; any problem is a one-line UsageError naming the file and line. A torn last
    line (a recording cut short by a crash) is skipped and noted in `problems`."""
    try:
        lines = read_text(path, limit=Limit.SESSION).splitlines()
    except FileNotFoundError:
        raise UsageError(f"cassette not found: {path}") from None
    except NotRegularFile as exc:
        if exc.kind == "a directory":
            raise UsageError(f"cassette path is a folder, not a file: {path}") from None
        raise UsageError(f"cassette {exc.because(str(path))}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read cassette {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not lines:
        raise UsageError(f"{path} is empty, not a cassette")
    try:
        head = json_loads(lines[0])
    except ValueError:
        head = None
    if not isinstance(head, dict) or head.get("type") != "header" or head.get("format") != FORMAT:
        raise UsageError(f"{path} is not an arreio cassette (line 1 must be its header)")
    version = head.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise UsageError(
            f"cassette {path} has format version {version}; this arreio reads up to version {VERSION} — upgrade arreio"
        )
    try:
        header = CassetteHeader.model_validate(head)
    except ValidationError as exc:
        raise UsageError(f"invalid cassette header in {path}: {_first_error(exc)}") from None
    cassette = Cassette(path=path, header=header)
    last = max((i for i, line in enumerate(lines) if line.strip()), default=0)
    for i, line in enumerate(lines[1:], start=1):
        if not line.strip():
            continue
        try:
            raw = json_loads(line)
        except ValueError:
            if i == last:
                cassette.problems.append(f"line {i + 1} is torn (a recording cut short); skipped")
                continue
            raise UsageError(f"invalid cassette {path}: line {i + 1} is not JSON") from None
        try:
            cassette.calls.append(_CALL.validate_python(raw))
        except ValidationError as exc:
            raise UsageError(f"invalid cassette {path}: line {i + 1}: {_first_error(exc)}") from None
    return cassette


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"'{'.'.join(str(p) for p in err['loc'])}': {err['msg']}"


class CassetteWriter:
    """Writes a cassette: the header atomically (a re-recording replaces the old file whole), then
    one call a line, appended, flushed and fsynced so a crash keeps every finished call
    (`durable=False`, the run's `fsync: false`: flushed only)."""

    def __init__(self, path: Path, header: CassetteHeader, redactor: Redactor, *, durable: bool = True) -> None:
        self.path = path
        self.redactor = redactor
        self.durable = durable
        self.calls = 0
        write_atomic(path, _line(redactor.value(header.model_dump(mode="json"))), durable=durable)

    def append(self, call: CassetteCall) -> None:
        dumped = call.model_dump(mode="json")
        redacted = {
            k: (self.redactor.stream_events(v) if k == "events" else self.redactor.value(v)) for k, v in dumped.items()
        }
        line = _line(redacted)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            if self.durable:
                os.fsync(handle.fileno())
        self.calls += 1


def _line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"

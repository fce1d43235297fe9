"""A provider that plays back a script of replies: `--script FILE` for CI, and the tests' fake.

A script is a YAML/JSON list (or `{replies: [...]}`) of replies:

```yaml
- text: "Let me look around."
  tool_calls: [{name: list_dir, arguments: {path: "."}}]
- error: {status: 429, message: "rate limited", retry_after: 1}   # a fault, served once
- thinking: "The notes are short."
  text: "Done."
```
A reply may also set `usage`, `stop_reason`, `chunk_chars` (streaming granularity), `delay_s` (a pause
before each chunk, to make runs slow enough to interrupt) and `cut_after_chars` (stream that much text,
then drop the connection — a retryable fault).

Sub-agents (`delegate`) get their own replies: the mapping form takes `agents`, keyed by the
sub-agent's tag (`d1` is the first child, `d2` the second, `d1.d1` the first child's child):

```yaml
replies:                      # the main agent
  - tool_calls: [{name: delegate, arguments: {task: "Count the notes"}}]
  - text: "The sub-agent counted them."
agents:
  d1:
    - tool_calls: [{name: list_dir, arguments: {path: notes}}]
    - text: "3 notes."
```

Determinism across resumes: the reply for a request is chosen from the number of assistant messages
already in the request's history (a sub-agent's request is told apart by its session id, which
ends in the agent's tag), so a resumed session picks up at the right reply. A plan unit's own
script counts from the unit's first turn (`first_turn`). Faults sit between replies and are served
once per provider instance.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arreio.engine.core.errors import UsageError
from arreio.engine.core.model_io import (
    Done,
    ErrorKind,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextChunk,
    ThinkingChunk,
    ToolCallDone,
    Usage,
)
from arreio.engine.core.regular_file import Limit
from arreio.engine.core.summary import summarised_turns
from arreio.engine.core.wording import counted
from arreio.engine.core.yaml_file import read_yaml

_AGENT_TAG = re.compile(r"d[1-9][0-9]*(\.d[1-9][0-9]*)*")


class ScriptedCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class ScriptedFault(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: int | None = None
    kind: ErrorKind | None = None
    message: str = "scripted fault"
    retry_after: float | None = None

    def to_error(self) -> ProviderError:
        kind = self.kind or classify_status(self.status)
        return ProviderError(kind=kind, message=self.message, status=self.status, retry_after=self.retry_after)


class ScriptedReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = ""
    thinking: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    error: ScriptedFault | None = None
    usage: Usage | None = None
    stop_reason: Literal["end_turn", "tool_use", "max_tokens", "refusal"] | None = None
    chunk_chars: int = Field(16, ge=1)
    delay_s: float = Field(0.0, ge=0)
    cut_after_chars: int | None = None

    @property
    def is_fault(self) -> bool:
        """A pure fault (no answer follows it in the same reply). A `cut_after_chars` reply is an
        answer whose first delivery is cut; the retry gets it whole."""
        return self.error is not None and self.cut_after_chars is None


def classify_status(status: int | None) -> ErrorKind:
    """The retry class of an HTTP status (docs/architecture.md section 5)."""
    if status in (401, 403):
        return "auth"
    if status is None or status in (408, 409, 429) or status >= 500:
        return "retryable"
    if status == 413:
        return "context_overflow"
    return "fatal"


@dataclass(frozen=True)
class Script:
    """A loaded script: the main agent's replies and each sub-agent's, by tag."""

    replies: list[ScriptedReply]
    agents: dict[str, list[ScriptedReply]] = field(default_factory=dict)


def _replies(data: Any, path: Path, where: str) -> list[ScriptedReply]:
    if not isinstance(data, list) or not data:
        raise UsageError(f"invalid script {path}:{where.rstrip(',')} expected a non-empty list of replies")
    replies = []
    for i, item in enumerate(data):
        try:
            replies.append(ScriptedReply.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise UsageError(f"invalid script {path}:{where} reply {i + 1}, '{loc}': {err['msg']}") from None
    return replies


def load_script(path: Path) -> Script:
    """Read a script file; any problem is a one-line UsageError naming the file and the spot."""

    data = read_yaml(path, error=UsageError, what="script", limit=Limit.SCRIPT)
    if not isinstance(data, dict):
        return Script(_replies(data, path, ""))
    unknown = sorted(set(data) - {"replies", "agents"})
    if unknown:
        raise UsageError(f"invalid script {path}: unknown key(s) {', '.join(map(str, unknown))} (use replies, agents)")
    agents = data.get("agents") or {}
    if not isinstance(agents, dict) or not all(_AGENT_TAG.fullmatch(str(tag)) for tag in agents):
        raise UsageError(f"invalid script {path}: 'agents' maps sub-agent tags (d1, d2, d1.d1, ...) to replies")
    return Script(
        _replies(data.get("replies"), path, ""),
        {str(tag): _replies(replies, path, f" agent {tag},") for tag, replies in agents.items()},
    )


def _message_chars(message: Any) -> int:
    """The characters of a message's text, results and call arguments (thinking and images count
    none). By the part's `type`: asking a part for a field it lacks goes through pydantic's
    `__getattr__` and an AttributeError, several a part (~3% of a scripted turn)."""
    chars = 0
    for part in message.parts:
        kind = part.type
        if kind == "text":
            chars += len(part.text)
        elif kind == "tool_result":
            chars += len(part.content)
        elif kind == "tool_call" and part.arguments:
            chars += len(str(part.arguments))
    return chars


_CHARS: dict[int, tuple[Any, int]] = {}  # id(message) -> (message, chars): messages are immutable


def estimate_request_tokens(request: ModelRequest) -> int:
    """A deterministic stand-in for provider-reported input tokens (~4 chars a token). Each message
    is measured once (a long scripted run would otherwise pay for its whole history every turn)."""
    chars = sum(len(b.text) for b in request.system)
    for message in request.messages:
        cached = _CHARS.get(id(message))
        if cached is None or cached[0] is not message:
            if len(_CHARS) > 100_000:
                _CHARS.clear()
            cached = _CHARS[id(message)] = (message, _message_chars(message))
        chars += cached[1]
    return max(1, chars // 4)


class _Seen:
    """What the provider has read of a history that grows at its end (the next request carries the
    same messages and a few more): assistant turns and characters, counted once per message, so the
    fake model stays instant however long the run."""

    def __init__(self) -> None:
        self.count, self.first, self.last = 0, None, None
        self.assistants = self.chars = self.summarised = 0
        self._read: list[Any] = []  # the messages read so far, to notice one replaced in place
        self._sizes: list[int] = []  # their characters

    def read(self, messages: list[Any]) -> _Seen:
        n = self.count
        if (
            not messages
            or messages[0] is not self.first
            or n > len(messages)
            or (n and messages[n - 1] is not self.last)
        ):
            n, self.assistants, self.chars = 0, 0, 0
            self.summarised = summarised_turns(messages)
            self.first = messages[0] if messages else None
            self._read, self._sizes = [], []
        elif self._read != messages[:n]:  # identical objects compare without __eq__: a C-speed walk
            # A result pruned to its stub in place (a prune keeps the first and the last message): a
            # real provider reads the shorter text, and so does this one (it kept counting the old one).
            for i in range(n):
                if messages[i] is not self._read[i]:
                    size = _message_chars(messages[i])
                    self.chars += size - self._sizes[i]
                    self.assistants += (messages[i].role == "assistant") - (self._read[i].role == "assistant")
                    self._read[i], self._sizes[i] = messages[i], size
        for message in messages[n:]:
            self.assistants += message.role == "assistant"
            size = _message_chars(message)
            self.chars += size
            self._read.append(message)
            self._sizes.append(size)
            if not self.summarised and n:
                self.summarised = summarised_turns([message])
        self.count, self.last = len(messages), messages[-1] if messages else None
        return self


class ScriptedProvider:
    """Plays a fixed list of replies (and each sub-agent's, see `agents`). Same requests in, same
    stream out."""

    name = "scripted"

    def __init__(
        self,
        replies: list[ScriptedReply | dict[str, Any]],
        *,
        agents: Mapping[str, list[ScriptedReply | dict[str, Any]]] | None = None,
        sleep=asyncio.sleep,
        keep_requests: bool = True,
    ) -> None:
        """`keep_requests`: keep every request in `requests`, for a test to look at (a run from a script
        file keeps none: each request holds the whole history, and a long run's add up)."""
        self.replies = [r if isinstance(r, ScriptedReply) else ScriptedReply.model_validate(r) for r in replies]
        self._answers = [i for i, r in enumerate(self.replies) if not r.is_fault]
        self._served_faults: set[int] = set()
        self._sleep = sleep
        self.requests: list[ModelRequest] = []
        self.keep_requests = keep_requests
        self._seen = _Seen()
        # None: this provider answers every request (a test's per-model fake). A mapping (a script
        # file always gives one): sub-agents play their own replies, and one without any fails.
        self._agents = (
            None
            if agents is None
            else {
                tag: ScriptedProvider(script, sleep=sleep, keep_requests=keep_requests)
                for tag, script in agents.items()
            }
        )

    @classmethod
    def from_script(cls, script: Script, *, first_turn: int = 0) -> ScriptedProvider:
        provider = cls(script.replies, agents=script.agents, keep_requests=False)
        provider.first_turn = first_turn
        return provider

    first_turn = 0  # the session's turn this script's first reply answers (a plan unit's own script)

    def _keep(self, request: ModelRequest) -> None:
        if self.keep_requests:
            self.requests.append(request)

    def _for_agent(self, request: ModelRequest) -> ScriptedProvider | None:
        """The provider that answers this request: a sub-agent's own script when the request comes
        from a sub-agent's session (`<root>.d1`), else this one. None: a sub-agent with no script
        (replaying the main list would have it call `delegate` again, and again)."""
        tag = (request.session_id or "").partition(".")[2]
        return self._agents.get(tag) if tag and self._agents is not None else self

    def _pick(self, assistant_count: int) -> int | None:
        if assistant_count > len(self._answers):
            return None
        start = self._answers[assistant_count - 1] + 1 if assistant_count > 0 else 0
        end = self._answers[assistant_count] if assistant_count < len(self._answers) else len(self.replies)
        for i in range(start, end):
            if i not in self._served_faults:
                return i
        return end if end < len(self.replies) else None

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        player = self._for_agent(request)
        if player is None:
            tag = (request.session_id or "").partition(".")[2]
            self._keep(request)
            message = f"the offline script has no replies for sub-agent {tag} (add agents: {{{tag}: [...]}})"
            yield Done(stop_reason="error", error=ProviderError(kind="fatal", message=message))
            return
        if player is not self:
            self._keep(request)
            async for event in player.stream(request):
                yield event
            return
        self._keep(request)

        seen = self._seen.read(request.messages)
        turns = seen.assistants + seen.summarised
        turn = max(0, turns - self.first_turn)
        index = self._pick(turn)
        if index is None:
            message = f"the offline script ran out after {counted(len(self._answers), 'reply', 'replies')}"
            yield Done(stop_reason="error", error=ProviderError(kind="fatal", message=message))
            return
        reply = self.replies[index]
        if reply.error is not None and reply.cut_after_chars is None:
            self._served_faults.add(index)
            yield Done(stop_reason="error", error=reply.error.to_error())
            return
        async for event in self._play(reply, index, request):
            yield event

    async def _play(self, reply: ScriptedReply, index: int, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if reply.thinking:
            yield ThinkingChunk(text=reply.thinking, signature=f"offline-sig-{index}")
        text = reply.text
        limit = reply.cut_after_chars if index not in self._served_faults else None
        for start in range(0, len(text), reply.chunk_chars):
            if limit is not None and start >= limit:
                break
            if reply.delay_s:
                await self._sleep(reply.delay_s)
            yield TextChunk(text=text[start : start + reply.chunk_chars])
        if limit is not None:
            self._served_faults.add(index)
            fault = reply.error or ScriptedFault(message="connection dropped mid-stream")
            yield Done(stop_reason="error", error=fault.to_error())
            return
        for j, call in enumerate(reply.tool_calls):
            yield ToolCallDone(id=call.id or f"call_{index}_{j}", name=call.name, arguments=call.arguments)
        usage = reply.usage or Usage(
            input_tokens=max(
                1, (sum(len(b.text) for b in request.system) + self._seen.read(request.messages).chars) // 4
            ),
            output_tokens=max(1, len(text) // 4),
        )
        stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
        yield Done(stop_reason=stop, usage=usage)

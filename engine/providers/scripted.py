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

Determinism across resumes: the reply for a request is chosen from the number of assistant messages
already in the request's history, so a resumed session picks up at the right reply. Faults sit
between replies and are served once per provider instance.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arreio.engine.errors import UsageError
from arreio.engine.providers.base import (
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
    """The retry class of an HTTP status (DESIGN.md section 5)."""
    if status in (401, 403):
        return "auth"
    if status is None or status in (408, 409, 429) or status >= 500:
        return "retryable"
    if status == 413:
        return "context_overflow"
    return "fatal"


def load_script(path: Path) -> list[ScriptedReply]:
    """Read a script file; any problem is a one-line UsageError naming the file and the spot."""
    from arreio.engine.yaml_file import read_yaml

    data = read_yaml(path, error=UsageError, what="script")
    if isinstance(data, dict) and "replies" in data:
        data = data["replies"]
    if not isinstance(data, list) or not data:
        raise UsageError(f"invalid script {path}: expected a non-empty list of replies")
    replies = []
    for i, item in enumerate(data):
        try:
            replies.append(ScriptedReply.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise UsageError(f"invalid script {path}: reply {i + 1}, '{field}': {err['msg']}") from None
    return replies


def estimate_request_tokens(request: ModelRequest) -> int:
    """A deterministic stand-in for provider-reported input tokens (~4 chars a token)."""
    chars = sum(len(b.text) for b in request.system)
    for message in request.messages:
        for part in message.parts:
            chars += len(getattr(part, "text", "") or getattr(part, "content", "") or "")
            chars += len(str(getattr(part, "arguments", "") or ""))
    return max(1, chars // 4)


class ScriptedProvider:
    """Plays a fixed list of replies. Same requests in, same stream out."""

    name = "scripted"

    def __init__(self, replies: list[ScriptedReply | dict[str, Any]], *, sleep=asyncio.sleep) -> None:
        self.replies = [r if isinstance(r, ScriptedReply) else ScriptedReply.model_validate(r) for r in replies]
        self._answers = [i for i, r in enumerate(self.replies) if not r.is_fault]
        self._served_faults: set[int] = set()
        self._sleep = sleep
        self.requests: list[ModelRequest] = []

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
        self.requests.append(request)
        from arreio.engine.compaction import summarised_turns  # a compacted history folds turns away

        turn = sum(1 for m in request.messages if m.role == "assistant") + summarised_turns(request.messages)
        index = self._pick(turn)
        if index is None:
            yield Done(
                stop_reason="error",
                error=ProviderError(kind="fatal", message=f"the offline script ran out after {len(self._answers)} replies"),
            )
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
            input_tokens=estimate_request_tokens(request), output_tokens=max(1, len(text) // 4)
        )
        stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
        yield Done(stop_reason=stop, usage=usage)

"""The one interface over every model backend (docs/architecture.md section 5).

A provider turns a `ModelRequest` into a stream of `StreamEvent`s that always ends with `Done`.
Failures are data: `Done.error` carries a `ProviderError` whose `kind` tells the runner whether to
retry, compact, or stop. Adapters never retry on their own (SDK `max_retries=0`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from arreio.engine.core.messages import Message


class ToolSpec(BaseModel):
    """What the model is told about a tool: name, description, JSON schema of its input."""

    name: str
    description: str
    input_schema: dict[str, Any]


class SystemBlock(BaseModel):
    """One block of the system prompt. Stable blocks come first so the prefix cache holds."""

    name: str
    text: str
    stable: bool = True


class ModelRequest(BaseModel):
    model: str
    system: list[SystemBlock] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    tools: list[ToolSpec] = Field(default_factory=list)
    max_tokens: int = 8192
    temperature: float | None = None
    session_id: str | None = None
    # Extended thinking: a token budget, "adaptive", or None (off). Sent to Claude (directly or
    # through litellm); other models ignore it.
    thinking: int | Literal["adaptive"] | None = None
    # Structured output (`--output-schema`): the JSON Schema the final answer must meet, as sent on the
    # wire (an object at the root: engine/providers/structured.py). Adapters with a native option pass
    # it on (OpenAI `response_format`, Anthropic `output_config`, litellm); the harness validates anyway.
    output_schema: dict[str, Any] | None = None

    @property
    def system_text(self) -> str:
        return "\n\n".join(b.text for b in self.system)


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    # The server reported no counts (llama-cpp-python's streams): on a reply's `Done` the counts are
    # then to be estimated; on a sum, some of them are arreio's estimates.
    estimated: bool = False

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            estimated=self.estimated or other.estimated,
        )


ErrorKind = Literal["retryable", "fatal", "auth", "context_overflow"]


class ProviderError(BaseModel):
    """Why a model call failed. `retry_after` is the server's hint in seconds, when it gave one."""

    kind: ErrorKind
    message: str
    status: int | None = None
    retry_after: float | None = None
    # The context window a refusal of a too-long request named (llama-server's n_ctx, "maximum context
    # length is N tokens"), so the run can fit itself to it.
    window: int | None = None


class TextChunk(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ThinkingChunk(BaseModel):
    """Reasoning text. A chunk with `signature` closes its block; one with `redacted` is a whole
    block of its own, whose content is encrypted (it goes back to the model, never to the user)."""

    type: Literal["thinking"] = "thinking"
    text: str
    signature: str | None = None
    redacted: str | None = None


class ToolCallDone(BaseModel):
    """A complete tool call, its arguments fully assembled."""

    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


StopReason = Literal["end_turn", "tool_use", "max_tokens", "error", "refusal"]


class Done(BaseModel):
    type: Literal["done"] = "done"
    stop_reason: StopReason
    usage: Usage = Field(default_factory=Usage)
    error: ProviderError | None = None


StreamEvent = TextChunk | ThinkingChunk | ToolCallDone | Done

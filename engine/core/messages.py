"""Conversation messages: the provider-neutral history the runner keeps and the session persists.

Shape of a history (docs/architecture.md invariant 1, *pairing*): an `assistant` message that holds tool calls
is immediately followed by one `tool` message per call, in the calls' declared order, each holding a
single `ToolResultPart`. Providers translate this shape to their wire format; nothing else does.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ThinkingPart(BaseModel):
    """A reasoning block. Replayed verbatim (with its signature) only to the model that wrote it.
    `redacted` holds the encrypted payload of a block the provider redacted (no readable text)."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str | None = None
    redacted: str | None = None


class ToolCallPart(BaseModel):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ImagePart(BaseModel):
    type: Literal["image"] = "image"
    media_type: str
    data: str  # base64


ResultStatus = Literal["ok", "error", "interrupted"]


class ToolResultPart(BaseModel):
    """The result of one tool call. `status="interrupted"` marks a result the harness synthesized
    because the call never finished (crash, cancel, ceiling)."""

    type: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    content: str
    is_error: bool = False
    status: ResultStatus = "ok"
    images: list[ImagePart] = Field(default_factory=list)


Part = Annotated[TextPart | ThinkingPart | ToolCallPart | ImagePart | ToolResultPart, Field(discriminator="type")]

Role = Literal["user", "assistant", "tool"]


class Message(BaseModel):
    """One message of the history. Assistant messages carry the `model` that produced them."""

    model_config = ConfigDict(extra="ignore")

    role: Role
    parts: list[Part]
    model: str | None = None

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role="user", parts=[TextPart(text=text)])

    @classmethod
    def assistant(cls, parts: list[Any], model: str) -> Message:
        return cls(role="assistant", parts=parts, model=model)

    @classmethod
    def tool_result(cls, result: ToolResultPart) -> Message:
        return cls(role="tool", parts=[result])

    # -- views --------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]

    @property
    def tool_result_part(self) -> ToolResultPart | None:
        for p in self.parts:
            if isinstance(p, ToolResultPart):
                return p
        return None


def interrupted_result(call: ToolCallPart, why: str = "interrupted before it finished") -> Message:
    """The synthetic result that keeps pairing whole when a call never produced one."""
    return Message.tool_result(
        ToolResultPart(
            call_id=call.id,
            name=call.name,
            content=f"[{why}; the call may or may not have taken effect — check before repeating]",
            is_error=True,
            status="interrupted",
        )
    )


def not_run_result(call: ToolCallPart, why: str) -> Message:
    """The result of a call that surely did not run (cancelled before it started, withdrawn at a
    ceiling): closed like an interrupted one — a resume may make it again — without the warning
    that it may have taken effect."""
    return Message.tool_result(
        ToolResultPart(call_id=call.id, name=call.name, content=f"[{why}]", is_error=True, status="interrupted")
    )

"""Proposals: what the proposer suggests saving. Untrusted model output, validated at the boundary."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class Proposal(BaseModel):
    """One suggested write to MEMORY.md (`memory`) or USER.md (`user`)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    target: Literal["memory", "user"]
    action: Literal["add", "replace", "remove"]
    content: str = ""
    old_text: str | None = None
    score: float = Field(ge=0.0, le=1.0)
    rationale: str = ""

    @model_validator(mode="after")
    def _fields_for_action(self) -> Proposal:
        if self.action in ("add", "replace") and not self.content:
            raise ValueError(f"{self.action} needs content")
        if self.action in ("replace", "remove") and not self.old_text:
            raise ValueError(f"{self.action} needs old_text")
        return self

    @property
    def preview(self) -> str:
        text = self.content or f"remove '{self.old_text}'"
        return text if len(text) <= 80 else text[:79] + "…"


def validate(raw: Any) -> Proposal | str:
    """A `Proposal`, or a one-line reason it is malformed (a rejection, not an error)."""
    try:
        return Proposal.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "proposal"
        return f"malformed proposal ({field}: {err['msg']})"

"""One gate of a plan, as the plan file writes it: its kind and the fields each kind reads. The plan
(`engine/run/plan.py`) holds a list of them; `gates.py` judges each."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class GateSpec(BaseModel):
    """One gate. Fields apply per kind: command/timeout_s; path/pattern; min (validator)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["command", "file", "promise", "validator"]
    name: str | None = None
    command: str | None = None
    timeout_s: float = Field(60.0, gt=0)
    path: str | None = None
    pattern: str | None = None
    min: float = Field(0.7, ge=0, le=1)

    @field_validator("pattern")
    @classmethod
    def _a_regex(cls, value: str | None) -> str | None:
        """Checked when the plan is read, before any unit runs (an invalid one failed the run at its end)."""
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        detail = {"command": self.command, "file": self.path}.get(self.kind)
        return f"{self.kind}: {detail}" if detail else self.kind

"""The `governance:` section of config.yaml, validated here (the engine's Settings keeps it open).

```yaml
governance:
  max_tool_calls: 200          # tool calls per run
  stall_s: 900                 # no event for this long: the model call or tool is cut off
  max_total_tokens: 2000000    # input + output tokens per run (null: no budget)
  max_cost_usd: 5.0            # estimated cost per run (null: no budget)
  repeat_limits: {once: 1, few: 3, paged: 3, per_target: 3}
  sensitive_tools: [deploy]    # ask before these (tools declaring `sensitive` always ask)
  write_allow: ["build/**", "docs/*.md"]   # writes outside these paths ask (empty: writes never ask)
  policy:
    - {tool: shell, match: "^git (status|diff|log)\\b", action: allow}
    - {tool: shell, match: "rm -rf", action: deny}
```
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from arreio.engine.config import parse_section

if TYPE_CHECKING:
    from arreio.engine.config import Settings

Action = Literal["allow", "ask", "deny"]
DEFAULT_REPEAT_LIMITS = {"once": 1, "few": 3, "paged": 3, "per_target": 3}


class PolicyRule(BaseModel):
    """One rule: `tool` (a name, or "*"), `match` a regex searched in the call's subject (for shell
    the command, for file tools the path, else the arguments as JSON; `arg` names another argument),
    and what to do."""

    model_config = ConfigDict(extra="forbid")

    tool: str = "*"
    match: str | None = None
    arg: str | None = None
    action: Action

    @field_validator("match")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as error:
                raise ValueError(f"not a valid regular expression: {error}") from None
        return value


class GovernanceSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_tool_calls: int = Field(200, ge=1, description="Tool calls per run before the ceiling lands.")
    stall_s: float = Field(900.0, gt=0, description="Seconds without any event before a model call or tool is cut off.")
    max_total_tokens: int | None = Field(None, ge=1, description="Input + output tokens per run (None: no budget).")
    max_cost_usd: float | None = Field(None, gt=0, description="Estimated USD per run (None: no budget).")
    repeat_limits: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_REPEAT_LIMITS))
    sensitive_tools: list[str] = Field(default_factory=list, description="Ask before these tools run.")
    write_allow: list[str] = Field(default_factory=list, description="Globs (cwd-relative) writes may touch unasked.")
    write_tools: list[str] = Field(default_factory=lambda: ["write_file", "edit_file"])
    policy: list[PolicyRule] = Field(default_factory=list)

    @field_validator("repeat_limits")
    @classmethod
    def _known_kinds(cls, value: dict[str, int]) -> dict[str, int]:
        unknown = sorted(set(value) - set(DEFAULT_REPEAT_LIMITS))
        if unknown:
            raise ValueError(f"unknown repeat kind(s) {', '.join(unknown)}; use once, few, paged, per_target")
        if any(v < 1 for v in value.values()):
            raise ValueError("each repeat limit must be at least 1")
        return {**DEFAULT_REPEAT_LIMITS, **value}


def governance_settings(settings: Settings) -> GovernanceSettings:
    """Validate `settings.governance`; a bad value is one ConfigError naming the field."""

    return parse_section(GovernanceSettings, settings.governance, "governance")

"""The `governance:` section of config.yaml, validated here (the engine's Settings keeps it open).

```yaml
governance:
  max_tool_calls: 200          # tool calls per run
  stall_s: 900                 # no event for this long: the model call or tool is cut off
  max_total_tokens: 2000000    # input + output tokens per run (null: no budget)
  max_cost_usd: 5.0            # estimated cost per run (null: no budget)
  repeat_limits: {once: 1, few: 3, paged: 3, per_target: 3, reads: 3}   # identical calls (ceilings.py)
  sensitive_tools: [deploy]    # ask before these (tools declaring `sensitive` always ask)
  write_allow: ["build/**", "docs/*.md"]   # writes outside these paths ask (empty: writes never ask)
  policy:
    - {tool: shell, match: "git status", action: allow}   # a command; every command of a line must be allowed
    - {tool: shell, match: "git diff", action: allow}
    - {tool: shell, match: "rm -rf", action: deny}        # also rm -r -f, rm -fr, find -delete, rmtree one-liners
    - {tool: "sqlite__write_*", action: deny}              # tool names and globs
    - {tool: write_file, path: ".git/hooks/pre-commit", action: allow}   # the one way into a protected path
```

Paths are resolved (symlinks, `..`) before `path`, `match` and `write_allow` see them. How rules are read
is in `policy.py`; what is protected in `protected.py`.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from arreio.engine.core.config import parse_section
from arreio.engine.walls.shell_syntax import parse_structure

if TYPE_CHECKING:
    from arreio.engine.core.config import Settings

Action = Literal["allow", "ask", "deny"]
# `reads`: a read-only tool's identical calls, counted afresh after any call that may change state
# (an MCP tool the server marks readOnlyHint; the rule is in ceilings.py).
DEFAULT_REPEAT_LIMITS = {"once": 1, "few": 3, "paged": 3, "per_target": 3, "reads": 3}
# A shell `match` with any of these is a regex, not a command: no command pattern needs them.
_REGEX_SYNTAX = re.compile(r"^\^|(?<!\\)\$$|\\|[()]|\.[*+?]|\{\d")


def reads_as_regex(match: str) -> bool:
    """Whether a shell rule's `match` is a regex (starts with `^`, ends with `$`, or holds a
    backslash, a parenthesis, `.*`, `.+`, `.?` or `{n`) rather than a command."""
    return _REGEX_SYNTAX.search(match) is not None


class PolicyRule(BaseModel):
    """One rule: the `tool` it is about (a name or a glob: "*", "github__*"), what to do, and what the
    call must look like for the rule to hold (both, when both are given):

    - `match`: for shell a command (`rm -rf`, `git status`, `curl | sh`), compared with the commands the
      line runs after parsing (quotes removed, flags normalised; `policy.py`); written as a regex (see
      `reads_as_regex`) it is searched in each command's words instead. For any other tool a regex
      searched in the call's subject: the resolved path for file tools, else the arguments as JSON
      (`arg` names the argument to search instead).
    - `path`: a glob on the resolved path a file tool touches (`src/**`, `docs/*.md`, `~/notes/*`,
      case ignored). An `allow` with a `path` inside a protected folder is the only way a tool may write
      there (`protected.py`).
    """

    model_config = ConfigDict(extra="forbid")

    tool: str = Field("*", description="The tool the rule is about: a name or a glob.")
    arg: str | None = Field(None, description="The argument `match` searches (default: the call's subject).")
    match: str | None = Field(None, description="A shell command as it reads, or a regex searched in the subject.")
    path: str | None = Field(None, min_length=1, description="A glob on the resolved path a file tool touches.")
    action: Action = Field(description="allow, ask or deny.")

    @field_validator("match")
    @classmethod
    def _readable(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return value
        tool = info.data.get("tool", "*")
        if fnmatchcase("shell", tool) and info.data.get("arg") in (None, "command") and not reads_as_regex(value):
            line = parse_structure(value)
            if not line.commands or not line.complete:
                raise ValueError(f"{value!r} is not a shell command (write one like 'git status')")
            return value  # for another tool a "*" rule's command that is no regex is matched as text
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
    repeat_limits: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_REPEAT_LIMITS),
        description="Identical calls allowed per repeat kind a tool declares; `reads` counts afresh after any call "
        "that may change state.",
    )
    sensitive_tools: list[str] = Field(default_factory=list, description="Ask before these tools run.")
    write_allow: list[str] = Field(default_factory=list, description="Globs (cwd-relative) writes may touch unasked.")
    write_tools: list[str] = Field(
        default_factory=lambda: ["write_file", "edit_file"], description="Tools whose `path` write_allow checks."
    )
    policy: list[PolicyRule] = Field(default_factory=list, description="Rules, first match wins: allow, ask or deny.")

    @field_validator("repeat_limits")
    @classmethod
    def _known_kinds(cls, value: dict[str, int]) -> dict[str, int]:
        unknown = sorted(set(value) - set(DEFAULT_REPEAT_LIMITS))
        if unknown:
            raise ValueError(f"unknown repeat kind(s) {', '.join(unknown)}; use {', '.join(DEFAULT_REPEAT_LIMITS)}")
        if any(v < 1 for v in value.values()):
            raise ValueError("each repeat limit must be at least 1")
        return {**DEFAULT_REPEAT_LIMITS, **value}


def governance_settings(settings: Settings) -> GovernanceSettings:
    """Validate `settings.governance`; a bad value is one ConfigError naming the field."""

    return parse_section(GovernanceSettings, settings.governance, "governance")

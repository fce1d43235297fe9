"""The `sandbox:` section of config.yaml."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from arreio.engine.core.config import parse_section
from arreio.engine.tools.sandbox.limits import LimitSettings
from arreio.engine.walls.agent_env import is_provider_key

Mode = Literal["workspace-write", "read-only", "off"]


class SandboxSettings(BaseModel):
    """The `sandbox:` section of config.yaml."""

    model_config = ConfigDict(extra="forbid")

    mode: Mode = Field(
        "workspace-write",
        description="workspace-write: shell writes only in the working directory; read-only: nowhere; "
        "off: no OS sandbox. Where the sandbox cannot start, shell runs unsandboxed with a warning.",
    )
    network: bool = Field(False, description="Let sandboxed commands use the network (and host sockets under /run).")
    writable_roots: list[str] = Field(
        default_factory=list,
        description="Absolute (or ~/) folders shell may also write in workspace-write mode, e.g. a build cache; "
        "protected paths stay read-only inside them.",
    )
    limits: LimitSettings = Field(
        default_factory=LimitSettings,
        description="What one sandboxed call may use: processes, memory, file size, /tmp.",
    )
    env_passthrough: list[str] = Field(
        default_factory=list,
        description="Secret-shaped environment variables (names or globs) shell and command gates still get; "
        "provider API keys are never passed.",
    )
    unsandboxed_gates: Literal["warn", "refuse"] | None = Field(
        None,
        description="Where no sandbox can run, a command gate after a run that changed files: warn (run it, "
        "loudly) or refuse (fail the gate). Unset: warn in run and chat, refuse in batch.",
    )

    @field_validator("writable_roots")
    @classmethod
    def _absolute(cls, value: list[str]) -> list[str]:
        for root in value:
            if not (root.startswith(("/", "~/")) or root == "~"):
                raise ValueError(
                    f"'{root}' must be an absolute path or start with ~/ (the working directory is writable already)"
                )
        return value

    @field_validator("env_passthrough")
    @classmethod
    def _no_provider_keys(cls, value: list[str]) -> list[str]:
        for name in value:
            if is_provider_key(name):
                raise ValueError(f"'{name}' is a model provider's key: it is never passed to the agent's commands")
        return value


def parse_sandbox(raw: Mapping[str, Any] | None) -> SandboxSettings:
    """Validate the section; a mistake is one ConfigError naming the field (`sandbox.mode`)."""
    return parse_section(SandboxSettings, raw, "sandbox")


def sandbox_settings(settings: Any) -> SandboxSettings:
    """The run's `sandbox:` section (`RunContext.section(sandbox_settings)` parses it once per run)."""
    return parse_sandbox(getattr(settings, "sandbox", None))

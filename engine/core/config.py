"""Layered settings: defaults < user config < project config < `ARREIO_*` env < flags.

Files are YAML read with ruamel (round-trip, so `arreio config` edits keep comments later). Every field
is documented here because this model *is* the documentation of `config.yaml`.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from arreio.engine.core.errors import ConfigError
from arreio.engine.core.paths import display_path, state_dir, user_config_path
from arreio.engine.core.ports import process_env
from arreio.engine.core.regular_file import Limit
from arreio.engine.core.yaml_file import read_yaml


class RetrySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_attempts: int = Field(6, ge=1, description="Model calls per step, first try included.")
    base_delay_s: float = Field(1.0, gt=0, description="First backoff delay; doubles each attempt.")
    max_delay_s: float = Field(30.0, gt=0, description="Cap on one backoff delay.")
    retry_after_max_s: float = Field(
        120.0, ge=0, description="Longest server-requested wait honoured; beyond it the call fails."
    )
    loading_wait_s: float = Field(
        180.0,
        ge=0,
        description="While a server says its model is still loading (HTTP 503 'Loading model', "
        "as llama.cpp does after a restart), keep retrying up to this many seconds in all, past max_attempts.",
    )


class ModelPrice(BaseModel):
    """`prices.<model>`: dollars per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, description="Input tokens.")
    output: float = Field(ge=0, description="Output tokens.")
    cache_read: float | None = Field(None, ge=0, description="Cached input (default: the input price).")
    cache_write: float | None = Field(None, ge=0, description="Writing the cache (default: the input price).")


class OpenAISettings(BaseModel):
    """How `openai/…` models are spoken to (engine/providers/openai.py)."""

    model_config = ConfigDict(extra="forbid")

    api: Literal["auto", "responses", "chat"] = Field(
        "auto",
        description="auto: the Responses API for OpenAI itself, Chat Completions for a compatible server "
        "(a base_url that is not OpenAI's); responses or chat force one.",
    )
    reasoning_summary: Literal["auto", "concise", "detailed", "off"] = Field(
        "auto",
        description="Reasoning summaries streamed as thinking (Responses API, reasoning models); off asks for none.",
    )
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(
        None, description="Reasoning effort of gpt-5 / o-series models (None: the model's default)."
    )


class ToolSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a typo (`shell_timeout`) must surface, not be ignored

    shell_timeout_s: float = Field(120.0, gt=0, le=600, description="Longest one shell command may take.")
    shell_output_cap: int = Field(
        30_000, ge=1_000, description="Characters of a command's output the model gets (head and tail kept)."
    )
    read_limit_lines: int = Field(2_000, ge=1, description="Lines read_file returns when the model asks for no limit.")
    grep_max_matches: int = Field(200, ge=1, description="Matches one grep returns at most.")
    timeout_s: float = Field(
        60.0,
        gt=0,
        description="Per-call timeout for tools without their own (shell: shell_timeout_s; MCP: the server's).",
    )
    delegate: dict[str, Any] = Field(default_factory=dict, description="Sub-agents: max_depth, max_steps.")
    parallel: int = Field(
        4, ge=1, le=32, description="Read-only calls of one reply run at most this many at a time (1: one by one)."
    )


class MemorySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_chars: int = Field(2200, gt=0, description="MEMORY.md limit, in characters.")
    user_chars: int = Field(1375, gt=0, description="USER.md limit, in characters.")


class CuratorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stale_days: float = Field(30, gt=0, description="Agent-made skills unused this long are marked stale.")
    archive_days: float = Field(90, gt=0, description="Unused this long, they move to skills/.archive/.")

    @model_validator(mode="after")
    def _archive_after_stale(self) -> CuratorSettings:
        if self.archive_days < self.stale_days:
            raise ValueError(
                f"archive_days ({self.archive_days:g}) must not be shorter than stale_days ({self.stale_days:g})"
            )
        return self


class Settings(BaseModel):
    """The whole configuration. Unknown top-level keys are refused so typos surface."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field("offline", description="Model string: anthropic/…, openai/…, litellm/…, offline.")
    max_steps: int = Field(50, ge=1, description="Model turns per unit before the step ceiling.")
    max_tokens: int = Field(8192, ge=1, description="Output token cap per model call.")
    base_url: str | None = Field(None, description="Provider endpoint override (proxy, compatible server).")
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="Your own prices per model string, in dollars per million tokens; they override the built-in "
        "table, and price a model served locally (otherwise $0).",
    )
    thinking: Literal["off", "adaptive"] | int = Field(
        "off",
        description="Extended thinking for Claude (anthropic/…, or through litellm): off, adaptive (the "
        "model decides), or a token budget of at least 1024, below max_tokens. Other models ignore it.",
    )
    retry: RetrySettings = Field(default_factory=RetrySettings)
    fallback_models: list[str] = Field(
        default_factory=list,
        description="Models tried in turn when the model still fails after its retries with a retryable "
        "error (overloaded, 5xx, rate limit past retry.retry_after_max_s, stream cut): the step is retried "
        "on the next one, which serves the rest of the run. Never on auth, bad request or context overflow.",
    )
    openai: OpenAISettings = Field(default_factory=OpenAISettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    curator: CuratorSettings = Field(default_factory=CuratorSettings)
    # Sections owned by feature modules, each validated there by its own model (one ConfigError
    # naming the field): context engineering, governance, tool families, knowledge, learning.
    context: dict[str, Any] = Field(default_factory=dict)
    governance: dict[str, Any] = Field(default_factory=dict)
    mcp_servers: dict[str, Any] = Field(default_factory=dict)
    web: dict[str, Any] = Field(default_factory=dict)
    sandbox: dict[str, Any] = Field(
        default_factory=dict, description="shell's OS sandbox: mode, network (engine/tools/sandbox.py)."
    )
    knowledge: dict[str, Any] = Field(default_factory=dict)
    learning: dict[str, Any] = Field(default_factory=dict)
    checkpoints: dict[str, Any] = Field(default_factory=dict)  # engine/checkpoints/settings.py
    # Commands run at moments of a run (engine/walls/hook_settings.py). The user's and the
    # project's lists for one moment are joined (user first), never replaced, and each entry says
    # which file it came from.
    hooks: dict[str, Any] = Field(default_factory=dict)
    instructions: dict[str, Any] = Field(
        default_factory=dict, description="Project instructions (AGENTS.md, CLAUDE.md): memory/instructions.py."
    )
    batch: dict[str, Any] = Field(default_factory=dict)  # `arreio batch`: engine/batch/settings.py
    tracing: dict[str, Any] = Field(default_factory=dict)  # OpenTelemetry export: engine/features/tracing.py
    tools_enabled: list[str] | None = Field(None, description="Only these tools are offered (None: all).")
    tools_disabled: list[str] = Field(default_factory=list, description="These tools are never offered.")
    structured_output: Literal["auto", "native", "tool"] = Field(
        "auto",
        description="How --output-schema is asked of the model: auto (the provider's own structured output "
        "where it has one, else a final `answer` tool), native, or tool (for a compatible server without json_schema).",
    )
    fsync: bool = Field(True, description="fsync every session append (crash safety); off only for benchmarks.")

    @field_validator("thinking", mode="before")
    @classmethod
    def _thinking_is_a_mode_or_a_number(cls, value: Any) -> Any:
        """One message for every wrong value (pydantic would name its union branches instead)."""
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
        if value in ("off", "adaptive") or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise ValueError(f"thinking is off, adaptive or a number of tokens (at least 1024), not {value!r}")

    @field_validator("thinking")
    @classmethod
    def _thinking_budget_fits(cls, value: Any, info: ValidationInfo) -> Any:
        max_tokens = info.data.get("max_tokens", 8192)
        if isinstance(value, int) and not 1024 <= value < max_tokens:
            raise ValueError(f"thinking budget {value} must be at least 1024 and below max_tokens ({max_tokens})")
        return value

    @property
    def thinking_request(self) -> int | Literal["adaptive"] | None:
        """What a model request carries: None when thinking is off."""
        return None if self.thinking == "off" else self.thinking


SectionModel = TypeVar("SectionModel", bound=BaseModel)


def parse_section(model: type[SectionModel], raw: Mapping[str, Any] | None, where: str) -> SectionModel:
    """Validate a feature's own config section (Settings keeps those open, see above); a mistake is
    one ConfigError naming the field as a user writes it (`web.search.backend`), a typo with the
    nearest valid name."""
    try:
        return model.model_validate(raw or {})
    except ValidationError as exc:
        err = first_error(exc)
        field = ".".join([where, *(str(p) for p in err["loc"])])
        if err["type"] == "extra_forbidden":
            raise ConfigError(f"unknown setting '{field}'{suggest_key(tuple(err['loc']), model, where)}") from None
        raise ConfigError(f"invalid setting '{field}': {_reason(err)}") from None


def config_sources(cwd: Path, env: Mapping[str, str]) -> str:
    """The config files in play, as a user would open them (for an error about a feature's section)."""
    files = [p for p in (user_config_path(env), state_dir(cwd, env) / "config.yaml") if p.exists()]
    return " or ".join(display_path(p, cwd) for p in files) or "the ARREIO_* environment"


def first_error(exc: ValidationError) -> Any:
    """The error to report: a misspelt key first (a typo also makes the real key look missing)."""
    errors = exc.errors()
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def _unknown_settings(exc: ValidationError, source: str) -> str:
    """Every misspelt key of one layer in one line, each with its near miss: fixed one at a time,
    a file with three typos took three tries."""
    unknown = [
        (".".join(str(p) for p in err["loc"] if "[" not in str(p)), suggest_key(err["loc"]))
        for err in exc.errors()
        if err["type"] == "extra_forbidden"
    ]
    if len(unknown) == 1:
        ((field, hint),) = unknown
        return f"unknown setting '{field}' in {source}{hint}"
    return f"unknown settings in {source}: " + ", ".join(f"'{field}'{hint}" for field, hint in unknown)


def _reason(err: Mapping[str, Any]) -> str:
    """pydantic's message without its "Value error, " prefix (our validators say the whole thing)."""
    return str(err["msg"]).removeprefix("Value error, ")


ENV_KEYS = {
    "ARREIO_MODEL": ("model",),
    "ARREIO_MAX_STEPS": ("max_steps",),
    "ARREIO_BASE_URL": ("base_url",),
    "ARREIO_THINKING": ("thinking",),
}


def _read_yaml(path: Path, cwd: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    shown = display_path(path, cwd)
    data = read_yaml(path, error=ConfigError, what="config", shown=shown, limit=Limit.CONFIG)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"invalid config {shown}: expected a mapping at the top level")
    return data


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _join_hooks(merged: dict[str, Any], layer: Mapping[str, Any], source: str, joined: dict[str, list[Any]]) -> None:
    """A layer's hooks are added to the ones before it, each entry marked with its file: a project
    that sets `hooks.post_tool_use` keeps the user's own formatter hook (a list would be replaced).
    `joined` carries each moment's list from layer to layer."""
    hooks = layer.get("hooks")
    if not isinstance(hooks, Mapping) or not isinstance(merged.get("hooks"), dict):
        return
    own = dict(merged["hooks"])
    for moment, entries in hooks.items():
        if isinstance(entries, list):
            marked = [{**e, "source": source} if isinstance(e, Mapping) else e for e in entries]
            joined[moment] = own[moment] = [*joined.get(moment, []), *marked]
    merged["hooks"] = own


def suggest_key(loc: tuple, root: Any = None, section: str = "", *, leaf_only: bool = False) -> str:
    """ " (did you mean 'max_steps'?)" for a near miss among the keys valid at that place; `root` is
    the model `loc` starts in (Settings, or a feature's section model named `section`)."""

    model: Any = root or Settings
    for part in loc[:-1]:
        if isinstance(part, int):  # an index into a list: the list's item model is already `model`
            continue
        field = model.model_fields.get(str(part)) if hasattr(model, "model_fields") else None
        model = field.annotation if field is not None else None
        # an optional section (`SearchSettings | None`): the model inside it
        model = next((a for a in typing.get_args(model) if hasattr(a, "model_fields")), model)
    if not hasattr(model, "model_fields"):
        return ""
    close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1)
    if not close:
        return ""
    shown = close[0] if leaf_only else ".".join([*filter(None, [section]), *map(str, loc[:-1]), close[0]])
    return f" (did you mean '{shown}'?)"


def config_files(cwd: Path, env: Mapping[str, str]) -> dict[str, Path]:
    """The config files a run reads, weakest first: the user's, then the project's (which may not exist)."""
    return {"user": user_config_path(env), "project": state_dir(cwd, env) / "config.yaml"}


def load_settings(
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    *,
    documents: Mapping[Path, Any] | None = None,
) -> Settings:
    """Merge every layer and validate once; a bad value names its file and field. `documents` stands
    in for a config file's parsed contents (keyed by its path in `config_files`): `arreio config set`
    validates the file it is about to write exactly as a run would read it, before writing it."""
    cwd = (cwd or Path.cwd()).resolve()
    env = process_env() if env is None else env
    layers: list[tuple[str, dict[str, Any]]] = []
    for path in config_files(cwd, env).values():
        data = documents[path] if documents and path in documents else _read_yaml(path, cwd)
        if data:
            layers.append((display_path(path, cwd), data))
    env_layer: dict[str, Any] = {}
    for var, keys in ENV_KEYS.items():
        if env.get(var):
            env_layer[keys[0]] = env[var]
    if env_layer:
        layers.append(("environment", env_layer))
    if flags:
        layers.append(("command line", {k: v for k, v in flags.items() if v is not None}))

    merged: dict[str, Any] = {}
    hook_lists: dict[str, list[Any]] = {}
    for source, data in layers:
        merged = _merge(merged, data)
        _join_hooks(merged, data, source, hook_lists)
        try:  # validate each layer's contribution so the error names where the bad value came from
            Settings.model_validate(merged)
        except ValidationError as exc:
            err = first_error(exc)
            field = ".".join(str(p) for p in err["loc"] if "[" not in str(p)) or "(top level)"
            if err["type"] == "extra_forbidden":
                raise ConfigError(_unknown_settings(exc, source)) from None
            raise ConfigError(f"invalid setting '{field}' from {source}: {_reason(err)}") from None
    return Settings.model_validate(merged)

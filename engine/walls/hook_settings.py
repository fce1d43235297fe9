"""User hooks in config: a command run at a moment of every run, as Claude Code users script theirs.

```yaml
hooks:
  timeout_s: 30                       # each hook's default
  env_passthrough: [SLACK_WEBHOOK]    # secret-shaped names a hook may see (provider keys: never)
  pre_tool_use:                       # before a tool call: exit 2 (or {"decision": "block"}) refuses it
    - {match: shell, command: [python3, /home/me/bin/no-rm-rf.py]}
  post_tool_use:                      # after a call that succeeded
    - {match: "write_file|edit_file", command: [black, -q, "{file}"]}
  user_prompt_submit: []              # a run's new instruction: exit 2 refuses it, stdout adds context
  session_start: []                   # a new session: stdout enters the prompt (a volatile block)
  stop:                               # the run ended; `match` is read against the verdict
    - {match: "failed|partial|cancelled", command: [notify-send, arreio, "a run did not succeed"]}
```

The hooks of the user's config and the project's (`.arreio/config.yaml`) are joined, user first
(engine/core/config.py); both files are protected from the agent's tools and sandbox, so the model cannot
add or change a hook (docs/architecture.md, invariant 10). `match` is a regular expression the tool's name (or,
for `stop`, the verdict) must match whole; none, "" or "*" match everything. `command` is a list of
words, or a string split as a shell would split it — no shell runs it. Its program is looked up only
where the agent cannot have put it (`engine/core/programs.py`): a bare name on the run's PATH without the
entries the agent can write, a path outside the working directory, or a script under the project's
`.arreio/` (which the agent cannot write). `{file}`, a word of its own (or an option's value,
`--path={file}`), is the absolute path of the file the tool call names (a hook using it runs only for
calls that name one); inside a longer word the agent's file name could be read as shell code.
`sandbox: true` runs the hook in the agent's own sandbox, for a program that reads code from the
project (a formatter whose config is a script).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from arreio.engine.core.config import Settings, parse_section
from arreio.engine.core.errors import ConfigError
from arreio.engine.core.programs import agent_writable, inside_any, trusted_which

MOMENTS = ("pre_tool_use", "post_tool_use", "user_prompt_submit", "session_start", "stop")
TOOL_MOMENTS = ("pre_tool_use", "post_tool_use")
FILE = "{file}"
_FILE_WORD = re.compile(r"\{file\}|--?[A-Za-z0-9][\w.-]*=\{file\}")


class HookSpec(BaseModel):
    """One hook: which calls (or verdicts) it answers, what it runs, for how long at most."""

    model_config = ConfigDict(extra="forbid")

    command: list[str] = Field(description="The program and its arguments (a string is split like a shell's words).")
    match: str = Field("", description="Regular expression the tool name (stop: the verdict) must match whole.")
    timeout_s: float | None = Field(
        None, gt=0, le=600, description="Seconds before it is killed (default hooks.timeout_s)."
    )
    sandbox: bool = Field(
        False, description="Run it in the agent's sandbox (for a program that runs the project's code)."
    )
    source: str = Field("config", description="The file it came from (set when config is read).")

    @field_validator("command", mode="before")
    @classmethod
    def _words(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = shlex.split(value)
            except ValueError as error:
                raise ValueError(f"cannot split the command into words: {error}") from None
        if isinstance(value, list) and not value:
            raise ValueError("the command is empty")
        if isinstance(value, list):  # YAML reads `[true]` or `[sleep, 5]` as a boolean and a number
            value = [
                str(w).lower() if isinstance(w, bool) else str(w) if isinstance(w, (int, float)) else w for w in value
            ]
            for word in value:
                if isinstance(word, str) and FILE in word and not _FILE_WORD.fullmatch(word):
                    # The agent names the file: inside a longer word (`sh -c "black {file}"`) its name
                    # would be read as shell code on the host.
                    raise ValueError(
                        f"{FILE} must be a word of its own (or an option's value, --x={FILE}), not "
                        f"part of {word!r}; a shell script takes it as an argument: "
                        f"[sh, -c, 'black \"$1\"', sh, '{FILE}']"
                    )
        return value

    @field_validator("match")
    @classmethod
    def _pattern(cls, value: str) -> str:
        if value not in ("", "*"):
            try:
                re.compile(value)
            except re.error as error:
                raise ValueError(f"not a regular expression: {error}") from None
        return value

    def matches(self, name: str) -> bool:
        return self.match in ("", "*") or re.fullmatch(self.match, name) is not None

    @property
    def shown(self) -> str:
        """The command as a user reads it in messages and the journal."""
        return shlex.join(self.command)


class HooksSettings(BaseModel):
    """`hooks:` (module docstring)."""

    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(30.0, gt=0, le=600, description="A hook's timeout unless it sets its own.")
    env_passthrough: list[str] = Field(
        default_factory=list, description="Secret-shaped variables a hook may see (names or globs)."
    )
    pre_tool_use: list[HookSpec] = Field(default_factory=list)
    post_tool_use: list[HookSpec] = Field(default_factory=list)
    user_prompt_submit: list[HookSpec] = Field(default_factory=list)
    session_start: list[HookSpec] = Field(default_factory=list)
    stop: list[HookSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _sandbox_where_it_runs(self) -> HooksSettings:
        for moment in ("session_start", "stop"):
            if any(spec.sandbox for spec in self.at(moment)):
                raise ValueError(f"sandbox: true is for the hooks of tool calls and prompts, not {moment}")
        return self

    def at(self, moment: str) -> list[HookSpec]:
        return list(getattr(self, moment))

    def all(self) -> list[tuple[str, int, HookSpec]]:
        return [(moment, i, spec) for moment in MOMENTS for i, spec in enumerate(self.at(moment))]

    def timeout(self, spec: HookSpec) -> float:
        return spec.timeout_s if spec.timeout_s is not None else self.timeout_s


def hook_settings(settings: Settings) -> HooksSettings:
    return parse_section(HooksSettings, settings.hooks, "hooks")


@dataclass(frozen=True)
class Resolved:
    """A hook's program as found (`path`), or why it was not (`problem`)."""

    path: str | None
    problem: str = ""


def resolve_program(
    spec: HookSpec, cwd: Path, env: Mapping[str, str], state: Path | None, writable_roots: Sequence[str] = ()
) -> Resolved:
    """Where the hook's program is, looked up only where the agent cannot have put it (module docstring)."""
    name = spec.command[0]
    untrusted = agent_writable(cwd, env, writable_roots)
    if "/" not in name:
        found = trusted_which(name, env, untrusted)
        if found is None:
            return Resolved(None, f"'{name}' is not on a PATH entry the agent cannot write")
        return Resolved(found)
    home = env.get("HOME") or str(Path.home())
    text = home + name[1:] if name == "~" or name.startswith("~/") else name
    candidate = Path(text) if Path(text).is_absolute() else cwd / text
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError):
        return Resolved(None, f"'{name}' cannot be resolved")
    protected_state = [p.resolve() for p in (state, cwd / ".arreio") if p is not None]
    if inside_any(resolved, protected_state):  # the project's own `.arreio/`: the agent cannot write it
        if resolved.is_file() and _executable(resolved):
            return Resolved(str(resolved))
        return Resolved(None, f"'{name}' is not an executable file")
    found = trusted_which(str(resolved), env, untrusted)
    if found is None:
        if resolved.is_file() and inside_any(resolved, untrusted):
            return Resolved(None, f"'{name}' is in a folder the agent can write (keep hook scripts under .arreio/)")
        return Resolved(None, f"'{name}' is not an executable file")
    return Resolved(found)


def _executable(path: Path) -> bool:
    import os

    return os.access(path, os.X_OK)


@dataclass(frozen=True)
class Found:
    """One configured hook and its program as found (`path` None: `problem` says why it cannot run)."""

    moment: str
    index: int
    spec: HookSpec
    path: str | None
    problem: str = ""


def find_programs(
    hooks: HooksSettings, cwd: Path, env: Mapping[str, str], state: Path | None, writable_roots: Sequence[str] = ()
) -> list[Found]:
    """Every hook with its program looked up, and what would stop it from running (for `arreio doctor`)."""
    out: list[Found] = []
    for moment, index, spec in hooks.all():
        found = resolve_program(spec, cwd, env, state, writable_roots)
        script = _agent_script(spec, cwd, env, state, writable_roots) if found.path is not None else None
        if script:
            found = Resolved(
                None,
                f"'{script}' is a script in a folder the agent can write, and the hook would run "
                "it on the host; keep hook scripts under .arreio/hooks/",
            )
        out.append(Found(moment, index, spec, found.path, found.problem))
    return out


def check_programs(
    hooks: HooksSettings, cwd: Path, env: Mapping[str, str], state: Path | None, writable_roots: Sequence[str] = ()
) -> dict[tuple[str, int], str]:
    """Each hook's program, found before the run starts; a hook that cannot run is a config error
    (a guard that silently does not run is worse than a run that does not start)."""
    out: dict[tuple[str, int], str] = {}
    for found in find_programs(hooks, cwd, env, state, writable_roots):
        if found.path is None:
            raise ConfigError(f"hooks.{found.moment}[{found.index}] ({found.spec.source}): {found.problem}")
        out[(found.moment, found.index)] = found.path
    return out


_SCRIPTS = (".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".lua", ".ps1")


def _agent_script(
    spec: HookSpec, cwd: Path, env: Mapping[str, str], state: Path | None, writable_roots: Sequence[str]
) -> str | None:
    """An argument naming a script the agent could have written (`python3 tools/fmt.py`): the program
    is trusted, but what it would run is not."""
    untrusted = agent_writable(cwd, env, writable_roots)
    kept = [p.resolve() for p in (state, cwd / ".arreio") if p is not None]
    for word in spec.command[1:]:
        if FILE in word or word.startswith("-"):
            continue
        try:
            path = (cwd / word).resolve()
            if not path.is_file():
                continue
        except (OSError, RuntimeError, ValueError):
            continue
        if (
            inside_any(path, untrusted)
            and not inside_any(path, kept)
            and (path.suffix.lower() in _SCRIPTS or _executable(path))
        ):
            return word
    return None

"""The `mcp_servers:` section of `.arreio/config.yaml`, validated here (the engine's Settings keeps it open).

```yaml
mcp_servers:
  files:                      # the name prefixes its tools: files__read_file
    command: npx              # stdio: a command, its args, extra env (values may say ${VAR})
    args: ["-y", "@modelcontextprotocol/server-filesystem", "."]
    env: {LOG_LEVEL: warn}
    timeout_s: 60             # per call
    tools: {deny: [write_file, "move_*"]}   # the server's own names (no `files__`), globs allowed
  search:
    url: https://mcp.example.com/mcp     # streamable HTTP: a url and headers
    headers: {Authorization: "Bearer ${SEARCH_TOKEN}"}
    enabled: false            # configured, not started
```
Every mistake is one `ConfigError` naming the field (`mcp_servers.files.args`).

`tools: {allow: [...], deny: [...]}` picks which of a server's tools are offered: `allow` (when given)
keeps only what it names, then `deny` removes. A withheld tool is known but not offered (naming it in
`--tools` is a warning, as for any unavailable tool); a name that matches none of the server's tools is
a warning with the closest names (`filter_warnings`), not an error — servers change their tool lists.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arreio.engine.core.errors import ConfigError

# Server names prefix tool names, and providers allow only [A-Za-z0-9_-] there; "__" separates the two.
SEP = "__"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*(_[A-Za-z0-9-]+)*$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ToolFilter(BaseModel):
    """Which of a server's tools are offered, by the names the server gives them; globs allowed."""

    model_config = ConfigDict(extra="forbid")

    allow: list[str] | None = Field(None, description="Offer only these (default: every tool).")
    deny: list[str] = Field(default_factory=list, description="Never offer these.")

    def withheld(self, remote: str) -> str | None:
        """Why the tool the server calls `remote` is not offered, or None when it is."""
        if self.allow is not None and not _any_match(remote, self.allow):
            return "not in its server's tools.allow"
        if _any_match(remote, self.deny):
            return "in its server's tools.deny"
        return None


def _any_match(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


class _Common(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: ToolFilter = Field(default_factory=ToolFilter, description="allow / deny by the server's tool names.")

    enabled: bool = Field(True, description="False keeps the server configured but not started.")
    timeout_s: float = Field(60.0, gt=0, le=3600, description="Longest one tool call may take.")
    connect_timeout_s: float = Field(30.0, gt=0, le=600, description="Longest start-up and listing may take.")
    sensitive: bool | None = Field(
        None,
        description="Whether calls count as sensitive (governance may ask first). Default: every tool the "
        "server does not mark read-only.",
    )


class StdioServer(_Common):
    """A server started as a subprocess, spoken to over its stdin/stdout."""

    transport: Literal["stdio"] = Field("stdio", description="Implied by `command`.")
    command: str = Field(min_length=1, description="The program that serves MCP on its stdin/stdout.")
    args: list[str] = Field(default_factory=list, description="Its arguments; ${VAR} reads the run's env.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment; ${VAR} reads the run's env.")
    cwd: str | None = Field(
        None,
        description="Folder the server starts in, relative to the working directory "
        "(default: a fresh folder of arreio's own; `.` for the working directory, which the "
        "agent can write).",
    )
    sandbox: bool | None = Field(
        None,
        description="Start the server inside the run's OS sandbox (as shell runs). Unset: only when it would "
        "run or start among files the agent can write (its command, a file it is given, its folder); false: never.",
    )


class HttpServer(_Common):
    """A server reached over streamable HTTP."""

    transport: Literal["http"] = Field("http", description="Implied by `url`.")
    url: str = Field(pattern=r"^https?://", description="The server's streamable-HTTP endpoint.")
    headers: dict[str, str] = Field(default_factory=dict, description="Sent with every request; ${VAR} allowed.")


McpServerConfig = StdioServer | HttpServer


def parse_mcp_servers(raw: Mapping[str, Any] | None) -> dict[str, McpServerConfig]:
    """Validate the section; the result keeps config order. Raises ConfigError naming the field."""
    servers: dict[str, McpServerConfig] = {}
    for name, body in (raw or {}).items():
        where = f"mcp_servers.{name}"
        if not isinstance(name, str) or not _NAME.match(name) or "__" in name or len(name) > 32:
            raise ConfigError(
                f"invalid setting '{where}': a server name is letters, digits, '-' and single '_' "
                "(at most 32 chars; '__' separates server and tool names)"
            )
        if not isinstance(body, Mapping):
            raise ConfigError(f"invalid setting '{where}': expected a mapping with 'command' or 'url'")
        if "command" in body and "url" in body:
            raise ConfigError(f"invalid setting '{where}': give 'command' (stdio) or 'url' (http), not both")
        if "command" not in body and "url" not in body:
            raise ConfigError(f"invalid setting '{where}': needs 'command' (stdio) or 'url' (streamable http)")
        model: type[BaseModel] = StdioServer if "command" in body else HttpServer
        try:
            servers[name] = model.model_validate(dict(body))  # type: ignore[assignment]
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise ConfigError(f"invalid setting '{where}.{field}': {err['msg']}") from None
    return servers


def filter_warnings(server: str, config: McpServerConfig, remotes: Sequence[str]) -> list[str]:
    """One warning per `tools.allow` / `tools.deny` entry that matches none of the tools the server
    lists, with the closest names (a typo in a deny list would otherwise offer what it meant to hide)."""
    out = []
    for key in ("allow", "deny"):
        for entry in getattr(config.tools, key) or []:
            if _any_match_any(entry, remotes):
                continue
            close = difflib.get_close_matches(entry, remotes, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; it offers {', '.join(remotes) or 'no tools'}"
            where = f"mcp_servers.{server}.tools.{key}"
            out.append(f"{where} names '{entry}', which server '{server}' does not offer{hint}")
    return out


def _any_match_any(pattern: str, names: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(n, pattern) for n in names)


def expand_vars(values: Mapping[str, str], env: Mapping[str, str], where: str) -> dict[str, str]:
    """`${VAR}` → its value in the run's environment (secrets stay out of config files).

    A variable that is not set raises `KeyError` with a readable message; the caller turns it into a
    warning (the server is unavailable), because the config itself is fine."""

    def one(key: str, text: str) -> str:
        def sub(match: re.Match[str]) -> str:
            var = match.group(1)
            if var not in env:
                raise KeyError(f"{where}.{key} needs ${{{var}}}, which is not set in the environment")
            return env[var]

        return _VAR.sub(sub, text)

    return {k: one(k, v) for k, v in values.items()}


def describe(config: McpServerConfig) -> str:
    """One line for `arreio mcp list`: how the server is reached."""
    if isinstance(config, StdioServer):
        return " ".join([config.command, *config.args])
    return config.url


def mcp_servers(settings: Any) -> dict[str, McpServerConfig]:
    """The run's `mcp_servers:` section (`RunContext.section(mcp_servers)` parses it once per run)."""
    return parse_mcp_servers(settings.mcp_servers)

"""A server's prompts: listed for `arreio mcp prompts`, and one rendered as a run's goal
(`arreio run --mcp-prompt server/name --arg k=v`).

A prompt is named `server/name` (a bare `name` works when exactly one server offers it). Before the
server is asked to render it, its arguments are checked here against what it listed: a missing
required argument or an unknown one is bad usage (`UsageError`, exit 2) naming the arguments, with
the closest name for a typo — servers answer such mistakes with "Internal server error" and a
traceback in their log, which tells the user nothing. The pure parts (`parse_ref`, `parse_args`,
`check_arguments`, `render`) are separate from the one impure edge (`Prompts`, which connects).
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arreio.engine.core.errors import ArreioError, UsageError
from arreio.engine.tools.mcp.config import McpServerConfig

_TIMEOUT_S = 30.0


@dataclass
class PromptInfo:
    """One prompt as a server lists it."""

    server: str
    name: str
    description: str = ""
    arguments: list[dict[str, Any]] = field(default_factory=list)  # {name, description, required}

    @property
    def ref(self) -> str:
        return f"{self.server}/{self.name}"

    def signature(self) -> str:
        """`file (required), focus` — how the arguments read in one line."""
        return ", ".join(a["name"] + (" (required)" if a["required"] else "") for a in self.arguments) or "none"

    def as_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "name": self.name,
            "ref": self.ref,
            "description": self.description,
            "arguments": self.arguments,
        }


def info_of(server: str, prompt: Any) -> PromptInfo:
    args = [
        {"name": a.name, "description": a.description or "", "required": bool(a.required)}
        for a in (prompt.arguments or [])
    ]
    return PromptInfo(server, prompt.name, " ".join((prompt.description or "").split()), args)


def parse_ref(ref: str) -> tuple[str | None, str]:
    """`server/name` → (server, name); a bare `name` → (None, name)."""
    server, sep, name = ref.strip().partition("/")
    if not sep:
        return None, server
    if not server or not name:
        raise UsageError(f"--mcp-prompt {ref!r}: give it as SERVER/NAME (see `arreio mcp prompts`)")
    return server, name


def parse_args(pairs: Sequence[str]) -> dict[str, str]:
    """`["file=a.py", "focus=speed"]` → a dict; a pair without `=` is bad usage."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--arg {pair!r}: give it as NAME=VALUE")
        out[key.strip()] = value
    return out


def check_arguments(prompt: PromptInfo, given: Mapping[str, str]) -> None:
    """Raise `UsageError` for an unknown argument (with the closest name) or a missing required one."""
    names = [a["name"] for a in prompt.arguments]
    for key in given:
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise UsageError(f"prompt {prompt.ref} has no argument '{key}'{hint}; its arguments: {prompt.signature()}")
    missing = [a["name"] for a in prompt.arguments if a["required"] and a["name"] not in given]
    if missing:
        wanted = " ".join(f"--arg {m}=…" for m in missing)
        raise UsageError(f"prompt {prompt.ref} needs {wanted} (its arguments: {prompt.signature()})")


def render(result: Any) -> str:
    """A rendered prompt (`prompts/get`) as one goal text: each message's text, in order; messages
    that are not the user's are marked with their role, so the goal reads as the server wrote it."""
    roles = {getattr(m, "role", "user") for m in result.messages or []}
    parts = []
    for message in result.messages or []:
        content = message.content
        kind = getattr(content, "type", "")
        if kind == "text":
            text = content.text
        elif kind == "resource" and hasattr(content.resource, "text"):
            text = f"[resource {content.resource.uri}]\n{content.resource.text}"
        else:
            text = f"[{kind or 'content'} omitted: a goal is text]"
        parts.append(text if roles == {"user"} else f"({message.role}) {text}")
    return "\n\n".join(p for p in parts if p.strip())


class Prompts:
    """Connects to the servers that may hold a prompt, lists or renders, and disconnects."""

    def __init__(
        self, servers: Mapping[str, McpServerConfig], *, cwd: Path, env: Mapping[str, str], log_dir: Path | None
    ) -> None:
        self.servers = dict(servers)
        self.cwd, self.env, self.log_dir = cwd, dict(env), log_dir

    def _server_names(self, server: str | None) -> list[str]:
        if server is None:
            return list(self.servers)
        if server not in self.servers:
            close = difflib.get_close_matches(server, list(self.servers), n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            known = ", ".join(self.servers) or "(none configured)"
            raise UsageError(f"no MCP server named '{server}' in config{hint}; configured: {known}")
        return [server]

    def _hub(self, names: Sequence[str]) -> Any:
        from arreio.engine.tools.mcp.hub import McpHub

        # asked for by name: a disabled server is connected too (as `arreio mcp test` does)
        chosen = {n: self.servers[n].model_copy(update={"enabled": True}) for n in names}
        hub = McpHub(chosen, cwd=self.cwd, env=self.env, log_dir=self.log_dir)
        hub.start()
        return hub

    def catalogue(self, server: str | None = None) -> tuple[list[PromptInfo], list[str]]:
        """Every prompt of the named server (or of every configured one), and one line per server
        that could not be asked (failed to start, or offers no prompts because it failed listing)."""
        names = self._server_names(server)
        if not names:
            return [], []
        hub = self._hub(names)
        try:
            return asyncio.run(self._catalogue(hub, names))
        finally:
            hub.close()

    async def _catalogue(self, hub: Any, names: Sequence[str]) -> tuple[list[PromptInfo], list[str]]:
        from arreio.engine.tools.base import ToolError
        from arreio.engine.tools.mcp.connection import list_all

        found: list[PromptInfo] = []
        problems = [f"{s.name}: {s.state} — {s.detail}" for s in hub.states() if s.state != "ready"]
        for name in names:
            if not hub.offers(name, "prompts"):
                continue
            try:
                listed = await hub.request(
                    name, lambda c: list_all(lambda cur: c.list_prompts(cursor=cur), "prompts"), _TIMEOUT_S
                )
            except ToolError as error:
                problems.append(f"{name}: could not list prompts — {error.message}")
                continue
            found += [info_of(name, p) for p in listed]
        return found, problems

    def find(self, ref: str) -> PromptInfo:
        """The prompt `ref` names, or a `UsageError` saying which exist (closest first)."""
        server, name = parse_ref(ref)
        prompts, problems = self.catalogue(server)
        return _pick(ref, server, name, prompts, problems)

    def goal(self, ref: str, arguments: Mapping[str, str]) -> str:
        """The prompt rendered with `arguments`, as a goal text (checked first; see the module doc).
        One connection serves both the listing and the rendering."""
        server, name = parse_ref(ref)
        names = self._server_names(server)
        hub = self._hub(names)
        try:
            prompts, problems = asyncio.run(self._catalogue(hub, names))
            prompt = _pick(ref, server, name, prompts, problems)
            check_arguments(prompt, arguments)
            try:
                result = asyncio.run(
                    hub.request(prompt.server, lambda c: c.get_prompt(prompt.name, dict(arguments)), _TIMEOUT_S)
                )
            except Exception as error:  # noqa: BLE001 — a ToolError from the hub, or the server's refusal
                raise ArreioError(
                    f"MCP server '{prompt.server}' could not render prompt {prompt.ref}: "
                    f"{getattr(error, 'message', error)}"
                ) from None
        finally:
            hub.close()
        text = render(result)
        if not text.strip():
            raise ArreioError(f"prompt {prompt.ref} rendered to nothing; there is no goal to run")
        return text


def _pick(ref: str, server: str | None, name: str, prompts: list[PromptInfo], problems: list[str]) -> PromptInfo:
    matches = [p for p in prompts if p.name == name]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise UsageError(
            f"prompt '{name}' is offered by several servers ({', '.join(p.ref for p in matches)}); "
            "name one as SERVER/NAME"
        )
    if not prompts and problems:
        raise ArreioError(f"cannot get prompt {ref}: MCP server {problems[0]}")
    close = difflib.get_close_matches(name, [p.name for p in prompts], n=1, cutoff=0.5)
    hint = f" (did you mean '{next(p.ref for p in prompts if p.name == close[0])}'?)" if close else ""
    where = f"server '{server}'" if server else "any configured MCP server"
    offered = ", ".join(p.ref for p in prompts) or "none"
    raise UsageError(f"no prompt '{name}' on {where}{hint}; prompts offered: {offered}")

"""What an MCP server says about itself and its tools, read by the run's `PromptScreen` before the
model sees it.

A server's `instructions` enter the stable system prompt and its tools' descriptions (with the
descriptions inside their input schemas) enter every request for the whole run: a third party
writing into the prompt, as durably as a memory entry. So they pass the same scan: a flagged text
is left out — the instructions block skips that server, the tool keeps its name and schema with an
empty description — and a warning names the server and the tool, never the words (a refusal that
quotes the hostile text would put it in front of the model after all). No screen (a library caller
with `PipelineDeps()` and no memory layer): everything goes in as before.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

from arreio.engine.core.ports import PromptScreen

__all__ = ["PromptScreen", "Screen"]


class Screen:
    """One run's screen over one hub's texts: each text judged once, each refusal warned once."""

    def __init__(self, screen: PromptScreen | None, warn: Callable[[str], None]) -> None:
        self._screen = screen
        self._warn = warn
        self._verdicts: dict[str, str | None] = {}
        self._warned: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def _why(self, text: str) -> str | None:
        if self._screen is None or not text.strip():
            return None
        with self._lock:
            if text not in self._verdicts:
                self._verdicts[text] = self._screen(text)
            return self._verdicts[text]

    def _refused(self, server: str, what: str, why: str) -> None:
        if (server, what) not in self._warned:
            self._warned.add((server, what))
            self._warn(f"MCP server '{server}': {what} failed the security scan ({why}) and is left out of the prompt")

    def instructions(self, server: str, text: str) -> str:
        """The server's instructions, or "" when they are left out."""
        why = self._why(text)
        if why is None:
            return text
        self._refused(server, "its instructions", why)
        return ""

    def description(self, server: str, tool: str, text: str) -> str:
        """A tool's description, or "" when it is left out."""
        why = self._why(text)
        if why is None:
            return text
        self._refused(server, f"the description of its tool '{tool}'", why)
        return ""

    def tool(self, server: str, tool: str, description: str, schema: dict[str, Any] | None) -> tuple[str, Any]:
        """`(description, input schema)` of one tool as the model may see them."""
        return self.description(server, tool, description), self.schema(server, tool, schema)

    def schema(self, server: str, tool: str, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        """The input schema with every description the scan flags taken out (the types stay)."""
        if not schema or self._screen is None:
            return schema
        flagged: list[str] = []
        clean = copy.deepcopy(schema)
        _strip(clean, lambda text: self._why(text) is not None, flagged)
        if not flagged:
            return schema
        why = self._why(flagged[0]) or "flagged"
        self._refused(server, f"a parameter description of its tool '{tool}'", why)
        return clean


def _strip(node: Any, bad: Callable[[str], bool], flagged: list[str]) -> None:
    """Remove, in place, the `description`/`title` strings of `node` (and its children) that `bad` flags."""
    if isinstance(node, dict):
        for key in ("description", "title"):
            value = node.get(key)
            if isinstance(value, str) and bad(value):
                flagged.append(value)
                del node[key]
        for value in node.values():
            _strip(value, bad, flagged)
    elif isinstance(node, list):
        for value in node:
            _strip(value, bad, flagged)

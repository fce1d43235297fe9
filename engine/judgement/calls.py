"""The session's tool calls as evidence, and the acts an answer claims held against them
(docs/architecture.md invariants 6 and 9).

An act (`acts.py`) holds when the session has a call that did it: the named tool was called; a file
claimed read was named in some call's arguments or result; a folder listing, a search, a run of the
tests had a call of that sort (`shell` may do any of them). Where the record cannot tell — the
history was compacted, a sub-agent or an MCP tool may have done it, a shell command may have read
files it does not name, the user's message carried the file — the act is left unchecked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from arreio.engine.context.pruning import STUB_MARKER
from arreio.engine.core.messages import Message
from arreio.engine.core.summary import is_summary
from arreio.engine.judgement.act_words import BUILTIN_TOOLS
from arreio.engine.judgement.acts import Act
from arreio.engine.judgement.claims import Claim

__all__ = ["Calls", "ShellRun", "act_claim", "last_run", "shell_runs", "alike"]

_EXIT = re.compile(r"^exit code: (-?\d+)(?: \(killed by signal \w+\))?\s*$", re.MULTILINE)
# How the harness words the result of a call that surely did not run (approvals, policy, blocklist,
# ceilings, a cancel before the call started): the command was never executed.
_NEVER_RAN = ("denied by ", "refused: ", "not run: ", "[not run: ")
# Tools whose every effect is in their arguments and result: any other (a sub-agent, an MCP server)
# may have read, listed, searched or run anything.
_OPEN_BOOK = BUILTIN_TOOLS - {"delegate"}
_LOOKING = {
    "read_file",
    "list_dir",
    "grep",
    "shell",
    "result_query",
    "result_grep",
    "kb_search",
    "skill_view",
    "web_fetch",
    "web_search",
    "brave",
}
_WEB = {"web_fetch", "web_search", "brave", "shell"}
# Files the harness itself puts before the model (instructions, memory, skills, the goal file).
_IN_THE_PROMPT = {"agents.md", "claude.md", "memory.md", "user.md", "skill.md", "goal.md"}
# A shell command that may read files it does not name: globs, substitutions, loops, interpreters, runners.
_OPAQUE_SHELL = re.compile(
    r"[*?\[{$`]|\b(?:xargs|for|while|find|exec|source|python\d?|node|bash|sh|zsh|ruby|perl|php|"
    r"make|npm|npx|yarn|pnpm|pytest|tox|cargo|go|java|deno|bun|uv|poetry|just|awk|sed)\b"
)


@dataclass(frozen=True)
class ShellRun:
    command: str
    code: int | None  # None: no exit code in the result
    timed_out: bool
    pruned: bool  # the result was replaced by a stub to save context: its exit code is unknown
    refused: bool = False  # it never ran: denied by a policy or a person, refused, cancelled before it started


def shell_runs(messages: list[Message]) -> list[ShellRun]:
    """Every `shell` call of the session that has a result, in order."""
    calls = {
        c.id: str(c.arguments.get("command", "")).strip()
        for m in messages
        if m.role == "assistant"
        for c in m.tool_calls
        if c.name == "shell"
    }
    runs: list[ShellRun] = []
    for m in messages:
        result = m.tool_result_part if m.role == "tool" else None
        if result is None or result.call_id not in calls:
            continue
        codes = _EXIT.findall(result.content)
        refused = result.is_error and not codes and result.content.startswith(_NEVER_RAN)
        runs.append(
            ShellRun(
                calls[result.call_id],
                int(codes[-1]) if codes else None,
                "[timed out after" in result.content,
                result.content.startswith(STUB_MARKER),
                refused,
            )
        )
    return runs


@dataclass(frozen=True)
class _Call:
    name: str
    text: str  # its arguments and result, lowercased: where a file it touched is named


class Calls:
    """What the session's history records of its tool calls."""

    def __init__(self, messages: list[Message]) -> None:
        results = {r.call_id: r.content for m in messages if m.role == "tool" and (r := m.tool_result_part) is not None}
        self.calls = [
            _Call(c.name, (json.dumps(c.arguments, ensure_ascii=False) + "\n" + results.get(c.id, "")).lower())
            for m in messages
            if m.role == "assistant"
            for c in m.tool_calls
        ]
        self.runs = shell_runs(messages)
        self.compacted = any(is_summary(m) for m in messages)
        self.opaque = any(c.name not in _OPEN_BOOK for c in self.calls)
        self.given = "\n".join(m.text for m in messages if m.role == "user").lower()

    def names(self) -> set[str]:
        return {c.name.lower() for c in self.calls}


def act_claim(act: Act, calls: Calls) -> Claim | None:
    """The act as a kept or broken claim, or None when the record cannot tell."""
    if calls.compacted:
        return None
    if act.kind == "tool":
        return _tool(act.subject, calls)
    if act.kind == "read":
        return _read(act.subject, calls)
    if act.kind == "command":
        return _command(act.subject, calls)
    if calls.opaque:
        return None
    none = "" if calls.calls else " (the session made no tool call)"
    if act.kind == "run":
        ran = any(not r.refused for r in calls.runs)
        return Claim(
            "run", act.subject, ran, "ran in a shell call" if ran else f"was claimed, but no command ran{none}"
        )
    wanted = _WEB if act.kind == "web" else _LOOKING
    if act.kind != "web" and _pasted(calls.given):
        return None  # "I searched the code" may mean the code the user pasted
    done = any(c.name in wanted for c in calls.calls)
    return Claim(
        act.kind, act.subject, done, "has a call that did it" if done else f"was claimed, but no tool call did it{none}"
    )


def _tool(name: str, calls: Calls) -> Claim | None:
    want = name.lower().replace("-", "_")
    called = {n.replace("-", "_") for n in calls.names()}
    if (
        want in called
        or any(n.endswith("__" + want) for n in called)
        or any(want in _command_words(r.command) for r in calls.runs)
    ):
        return Claim("tool", f"the {name} tool", True, "was called")
    if calls.opaque or (want not in BUILTIN_TOOLS and calls.calls) or any(want in c.text for c in calls.calls):
        # A sub-agent may have called it; an unknown name may be a tool's other name; a name the
        # session's files hold may be the project's own function ("the read_file helper").
        return None
    why = "was never called in this session" + ("" if calls.calls else " (the session made no tool call)")
    return Claim("tool", f"the {name} tool", False, why)


def _read(path: str, calls: Calls) -> Claim | None:
    base = PurePosixPath(path).name.lower()
    if base in _IN_THE_PROMPT or _carried(base, calls.given):
        return None
    if any(base in c.text for c in calls.calls):
        return Claim("read", f"reading {path}", True, "a call named it")
    if calls.opaque or any(_OPAQUE_SHELL.search(r.command) for r in calls.runs):
        return None  # a sub-agent, or a shell command that reads files it does not name
    why = (
        "was claimed, but no tool call in this session touched it"
        if calls.calls
        else ("was claimed, but the session made no tool call")
    )
    return Claim("read", f"reading {path}", False, why)


def _command(command: str, calls: Calls) -> Claim | None:
    run = last_run(command, calls.runs)
    if run is None:
        if calls.opaque or any(alike(command, r.command) for r in calls.runs):
            return None
        return Claim("command", command, False, "was never run in this session")
    if run.refused:
        return Claim("command", command, False, "never ran (it was refused or cancelled)")
    return Claim("command", command, True, "ran")


def _carried(base: str, given: str) -> bool:
    """The user's message carried the file: an attached `@` mention (a fenced block named for it) or
    its text pasted under its name ("notes.txt:" then a new line)."""
    return re.search(rf"(?:```|~~~)[^\n]*{re.escape(base)}|{re.escape(base)}:\s*\n", given) is not None


def _pasted(given: str) -> bool:
    return "```" in given or "~~~" in given or len(given) > 2000


def _command_words(command: str) -> set[str]:
    return {w.rsplit("/", 1)[-1] for w in re.split(r"[\s|;&()]+", command.lower()) if w}


def last_run(command: str, runs: list[ShellRun]) -> ShellRun | None:
    """The last run of exactly `command`, else the last run holding it whole ("pytest" in
    "cd app && python -m pytest -q"): answers name commands shorter than they ran them."""
    exact = [r for r in runs if r.command == command]
    if exact:
        return exact[-1]
    want = _words(command)
    holding = [r for r in runs if _holds(_words(r.command), want)]
    return holding[-1] if holding else None


def _words(command: str) -> list[str]:
    return [w.removeprefix("./").rstrip("/") or w for w in command.split()]


def _holds(words: list[str], want: list[str]) -> bool:
    return any(words[i : i + len(want)] == want for i in range(len(words) - len(want) + 1))


_GLUE = {"cd", "&&", "||", ";", "|", "2>&1", "python", "python3", "-m", "uv", "run", "poetry"}


def alike(claimed: str, ran: str) -> bool:
    """The same command in other words: one's words all among the other's (flags in another order,
    a path added or dropped, `npm run test` for `npm test`), `cd` and interpreters aside."""
    a, b = set(_words(claimed)) - _GLUE, set(_words(ran)) - _GLUE
    return bool(a and b) and (a <= b or b <= a)

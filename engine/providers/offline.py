"""The deterministic, hermetic `--offline` model: no network, no randomness, $0.

Without a script it follows a fixed policy read from the goal (the first user message) and the history,
so it can drive a real multi-step run and resume one after a crash:

1. list the working directory;
2. read every file the goal names that it is not asked to write (all in one turn, as parallel calls);
3. write each file the goal asks for, with a deterministic summary of what it read;
4. answer with a summary of what it did.

Each step is decided from the history alone (stateless), so the same history always yields the same
reply. With `--script FILE` the `ScriptedProvider` plays the file instead.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

from arreio.engine.context.compaction import offline_summary
from arreio.engine.conveyor.promises import paths_in
from arreio.engine.messages import Message, ToolCallPart, ToolResultPart
from arreio.engine.providers.base import (
    Done,
    ModelRequest,
    StreamEvent,
    TextChunk,
    ToolCallDone,
    Usage,
)
from arreio.engine.providers.scripted import estimate_request_tokens

_WRITE_VERBS = re.compile(
    r"\b(write|writes|save|saves|create|creates|produce|produces|generate|generates|output|put|store|record)\b",
    re.IGNORECASE,
)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z0-9`*\-])|\n+")
_LINE_NUMBER = re.compile(r"^\s*\d+\t", re.MULTILINE)
_URL = re.compile(r"https?://\S+")


def goal_files(goal: str) -> tuple[list[str], list[str]]:
    """(inputs, outputs) named by a goal, in order of first mention, without duplicates.

    A file named in a sentence with a writing verb is an output; every other named file is an input.
    """
    inputs: list[str] = []
    outputs: list[str] = []
    for sentence in _SENTENCE_SPLIT.split(_URL.sub(" ", goal)):
        names = [path for _, path in paths_in(sentence)]
        target = outputs if _WRITE_VERBS.search(sentence) else inputs
        for name in names:
            if name not in target:
                target.append(name)
    inputs = [n for n in inputs if n not in outputs]
    return inputs, outputs


def _calls_and_results(messages: list[Message]) -> list[tuple[ToolCallPart, ToolResultPart | None]]:
    interrupted = {
        p.call_id for m in messages if m.role == "tool" for p in m.parts
        if isinstance(p, ToolResultPart) and p.status == "interrupted"
    }
    # An `interrupted` result (crash, cancel) does not count: the offline model repeats that call.
    results = {
        p.call_id: p
        for m in messages
        if m.role == "tool"
        for p in m.parts
        if isinstance(p, ToolResultPart) and p.status != "interrupted"
    }
    calls = [c for m in messages if m.role == "assistant" for c in m.tool_calls]
    return [(c, results.get(c.id)) for c in calls if c.id not in interrupted]


def _strip_numbers(content: str) -> str:
    body = re.sub(r"\n?\[showing lines [^\]]*\]\s*$", "", content)
    return _LINE_NUMBER.sub("", body)


def _quoted(path: str) -> str:
    """A path as the answer names it: backticked when it holds a space, so it reads as one path."""
    return f"`{path}`" if any(c.isspace() for c in path) else path


def describe(name: str, text: str) -> list[str]:
    """A few deterministic facts about one file's text."""
    lines = text.splitlines()
    words = len(text.split())
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    headings = [ln.lstrip("#").strip() for ln in lines if ln.startswith("#")]
    out = [f"## {name}", "", f"- {len(lines)} lines, {words} words"]
    if first:
        out.append(f"- First line: {first[:120]}")
    if headings:
        out.append(f"- Headings: {'; '.join(h[:60] for h in headings[:8])}")
    todo = [ln.strip() for ln in lines if re.match(r"\s*[-*]\s*\[ \]", ln)]
    if todo:
        out.append(f"- Open items: {len(todo)}")
    return out + [""]


class OfflineProvider:
    """The default offline model (see module docstring)."""

    name = "offline"

    def __init__(self, chunk_chars: int = 24) -> None:
        self.chunk_chars = chunk_chars

    def reply(self, request: ModelRequest) -> tuple[str, list[ToolCallDone]]:
        """The next reply for this history: (text, tool calls). Pure."""
        if request.system and request.system[0].name == "arreio-summariser":
            # A compaction summary request (engine/context/compaction.py marks it): answer with a deterministic one.

            return offline_summary(request), []
        messages = request.messages
        # Every instruction so far counts (a plan sends one per unit): files named anywhere are in play.
        goal = "\n".join(m.text for m in messages if m.role == "user")
        tools = {t.name for t in request.tools}
        inputs, outputs = goal_files(goal)
        history = _calls_and_results(messages)
        step = sum(1 for m in messages if m.role == "assistant")

        def call(j: int, name: str, **arguments: object) -> ToolCallDone:
            return ToolCallDone(id=f"offline_{step}_{j}", name=name, arguments=dict(arguments))

        if not history and "list_dir" in tools:
            return "I'll start by looking at the working directory.", [call(0, "list_dir", path=".")]
        read = {c.arguments.get("path") for c, _ in history if c.name == "read_file"}
        unread = [p for p in inputs if p not in read]
        if unread and "read_file" in tools:
            names = ", ".join(unread)
            return f"Reading {names}.", [call(j, "read_file", path=p) for j, p in enumerate(unread)]
        written = {c.arguments.get("path") for c, r in history if c.name == "write_file" and r and not r.is_error}
        attempted = {c.arguments.get("path") for c, _ in history if c.name == "write_file"}
        pending = [p for p in outputs if p not in attempted]
        if pending and "write_file" in tools:
            content = self._report(goal, history, inputs)
            return (
                f"Writing {', '.join(pending)}.",
                [call(j, "write_file", path=p, content=content) for j, p in enumerate(pending)],
            )
        return self._final(history, inputs, outputs, written), []

    def _report(self, goal: str, history, inputs: list[str]) -> str:
        title = next((ln.lstrip("# ").strip() for ln in goal.splitlines() if ln.strip()), "the goal")
        lines = [f"# Summary: {title}", "", "Written by the arreio offline model from the files the goal names.", ""]
        contents = {c.arguments.get("path"): r for c, r in history if c.name == "read_file"}
        for name in inputs:
            result = contents.get(name)
            if result is None or result.is_error:
                lines += [f"## {name}", "", "- could not be read", ""]
            else:
                lines += describe(name, _strip_numbers(result.content))
        return "\n".join(lines).rstrip() + "\n"

    def _final(self, history, inputs, outputs, written) -> str:
        listing = next((r for c, r in history if c.name == "list_dir" and r), None)
        entries = 0
        if listing is not None and not listing.is_error:
            counted = re.search(r"\((\d+) entr", listing.content)
            entries = int(counted.group(1)) if counted else len(listing.content.splitlines())
        read_ok = [c.arguments.get("path") for c, r in history if c.name == "read_file" and r and not r.is_error]
        parts = []
        if listing is not None:
            parts.append(f"listed the working directory ({entries} entries)")
        if read_ok:
            parts.append("read " + ", ".join(_quoted(p) for p in read_ok))
        if written:
            parts.append("wrote " + ", ".join(_quoted(p) for p in outputs if p in written))
        failed = [p for p in outputs if p not in written]
        said = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts else "had nothing to do"
        text = f"Done. I {said}."
        if failed:
            text += f" I could not write {', '.join(_quoted(p) for p in failed)}."
        return text

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        text, calls = self.reply(request)
        for start in range(0, len(text), self.chunk_chars):
            yield TextChunk(text=text[start : start + self.chunk_chars])
        for c in calls:
            yield ToolCallDone(id=c.id, name=c.name, arguments=c.arguments)
        usage = Usage(input_tokens=estimate_request_tokens(request), output_tokens=max(1, len(text) // 4))
        yield Done(stop_reason="tool_use" if calls else "end_turn", usage=usage)

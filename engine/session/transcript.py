"""A saved session as something to read or hand on (`arreio sessions export`): a readable Markdown
transcript, a JSON document for tools, and (transcript_html.py) a self-contained HTML page.

Every form shows what the session file holds. Secrets were redacted when the lines were written
(docs/architecture.md: one redactor per run, used by every writer), so an export shows them redacted as
stored and never tries to recover anything. A tool call is shown with its result under it; a result
whose call is missing (a damaged file the loader healed around) is shown where it stands.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from arreio.engine.core.messages import ImagePart, Message, ToolCallPart, ToolResultPart

__all__ = ["EXPORT_VERSION", "Entry", "Turn", "to_json", "to_markdown", "turns"]

EXPORT_VERSION = 1  # the JSON export's own format version (what a tool reading it checks)
FOLD_LINES = 40  # a tool result longer than this is folded (the reader opens it)


@dataclass
class Entry:
    """One thing a turn shows: text, thinking, a call with its result, an orphan result, an image."""

    kind: Literal["text", "thinking", "call", "result", "image"]
    text: str = ""
    call: ToolCallPart | None = None
    result: ToolResultPart | None = None
    image: ImagePart | None = None


@dataclass
class Turn:
    role: str  # user | assistant | tool (a tool turn holds only results whose call was not found)
    model: str | None = None
    entries: list[Entry] = field(default_factory=list)


def turns(messages: list[Message]) -> list[Turn]:
    """The history regrouped for reading: each result moves under its call; tool messages whose
    results all found their call disappear into the assistant turn before them."""
    results = {p.call_id: p for m in messages if m.role == "tool" for p in m.parts if isinstance(p, ToolResultPart)}
    placed: set[str] = set()
    out: list[Turn] = []
    for message in messages:
        turn = Turn(role=message.role, model=message.model)
        for part in message.parts:
            if part.type == "text":
                if part.text.strip():
                    turn.entries.append(Entry("text", text=part.text))
            elif part.type == "thinking":
                shown = part.thinking or ("(redacted thinking)" if part.redacted else "")
                if shown.strip():
                    turn.entries.append(Entry("thinking", text=shown))
            elif part.type == "tool_call":
                result = results.get(part.id)
                if result is not None:
                    placed.add(part.id)
                turn.entries.append(Entry("call", call=part, result=result))
            elif part.type == "tool_result":
                if part.call_id not in placed:
                    turn.entries.append(Entry("result", result=part))
            elif part.type == "image":
                turn.entries.append(Entry("image", image=part))
        if turn.entries:
            out.append(turn)
    return out


def call_summary(call: ToolCallPart) -> str:
    """A call on one line: its name and arguments as JSON (the full arguments follow when long)."""
    return f"{call.name} {json.dumps(call.arguments, ensure_ascii=False)}"


def result_label(result: ToolResultPart) -> str:
    lines = result.content.count("\n") + 1 if result.content else 0
    status = "error" if result.is_error else result.status
    return f"{status} · {lines} line{'s' if lines != 1 else ''}"


# -- JSON ---------------------------------------------------------------------------------------
def to_json(header: Any, messages: list[Message], runs: list[dict[str, Any]], repairs: list[Any]) -> str:
    """The session for tools: header, run markers, messages as stored, the repairs a load would make."""
    return (
        json.dumps(
            {
                "export": "arreio.session",
                "version": EXPORT_VERSION,
                "header": header.model_dump(mode="json"),
                "runs": runs,
                "messages": [m.model_dump(mode="json") for m in messages],
                "repairs": [r.model_dump(mode="json") for r in repairs],
            },
            ensure_ascii=False,
            indent=2,
        )
        + "\n"
    )


# -- Markdown -----------------------------------------------------------------------------------
def fence(text: str, info: str = "") -> str:
    """`text` in a code fence longer than any run of backticks inside it (so nothing breaks out)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text.rstrip(chr(10))}\n{ticks}"


def _details(summary: str, body: str) -> str:
    # GitHub, GitLab and most viewers fold <details>; a plain viewer still shows everything.
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def _md_summary(text: str) -> str:
    # A summary line is HTML: what the session holds must not become markup there.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_markdown(header: Any, messages: list[Message], runs: list[dict[str, Any]]) -> str:
    """A readable transcript: who said what, each tool call with its result under it, thinking and
    long results folded, the system prompt folded at the top."""
    out = [f"# {header.title or 'Session ' + header.id}", ""]
    out.append(f"- session: `{header.id}`")
    out.append(f"- model: `{header.model}`")
    out.append(f"- created: {header.created_at}")
    out.append(f"- working directory: `{header.cwd}`")
    ended = [r for r in runs if r.get("event") == "end"]
    if ended:
        out.append(f"- runs: {len(ended)} (last: {ended[-1].get('verdict', '?')} at {ended[-1].get('at', '?')})")
    system = "\n\n".join(block.text for block in header.system)
    if system.strip():
        out += ["", _details("System prompt", fence(system))]
    for turn in turns(messages):
        who = {"user": "User", "assistant": "Assistant", "tool": "Tool results"}[turn.role]
        out += ["", f"## {who}" + (f" · {turn.model}" if turn.role == "assistant" and turn.model else ""), ""]
        for entry in turn.entries:
            out += [_md_entry(entry), ""]
    return "\n".join(out).rstrip() + "\n"


def _md_entry(entry: Entry) -> str:
    if entry.kind == "text":
        return entry.text.strip()
    if entry.kind == "thinking":
        return _details("Thinking", fence(entry.text))
    if entry.kind == "image":
        assert entry.image is not None
        return f"*[image: {entry.image.media_type}, {len(entry.image.data) * 3 // 4:,} bytes]*"
    if entry.kind == "call":
        assert entry.call is not None
        head = f"**Tool call** `{entry.call.name}`"
        args = json.dumps(entry.call.arguments, ensure_ascii=False, indent=2)
        parts = [head, "", fence(args, "json")]
        parts += ["", _md_result(entry.result) if entry.result else "> *(no result recorded)*"]
        return "\n".join(parts)
    assert entry.result is not None
    return f"**Result of** `{entry.result.name}` *(its call is not in the session)*\n\n{_md_result(entry.result)}"


def _md_result(result: ToolResultPart) -> str:
    body = fence(result.content or "(empty)")
    images = "".join(f"\n\n*[image: {i.media_type}, {len(i.data) * 3 // 4:,} bytes]*" for i in result.images)
    label = _md_summary(f"Result: {result_label(result)}")
    if result.content.count("\n") + 1 > FOLD_LINES:
        return _details(label, body) + images
    return f"*{label}*\n\n{body}{images}"

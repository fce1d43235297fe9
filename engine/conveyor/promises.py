"""What a final answer promises, checked against what exists (DESIGN.md invariant 6).

The server checks; the model does not promise. Two kinds of claim are recognised:
- files it says it wrote/created/saved/updated → the file must exist (and not be empty);
- commands it says pass/succeed (in backticks) → the session must hold a `shell` call of that
  command whose last run exited 0.
Anything else in the answer is not a checkable claim and is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from arreio.engine.messages import Message

_WRITE = re.compile(
    r"\b(wrote|written|write|created|create|saved|save|generated|updated|produced|added|stored|put)\b", re.IGNORECASE
)
_OTHER = re.compile(
    r"\b(read|reads|listed|list|looked|opened|checked|inspected|reviewed|found|saw|searched|grepped|viewed|used)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"(\bnot|n't|\bnever|\bunable to|\bfailed to|\bcannot|\bno longer)\W+(\w+\W+){0,2}$", re.IGNORECASE)
_PASS = re.compile(r"\b(pass|passes|passed|passing|succeed|succeeds|succeeded|green|works|exit(?:s|ed)? (?:with )?0)\b", re.IGNORECASE)
_FILE = re.compile(r"(?<![\w/.-])((?:\.{0,2}/)?[\w][\w.-]*(?:/[\w.-]+)*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/-])")
_TICKED = re.compile(r"`([^`\n]+)`")
_NOT_FILES = {"e.g", "i.e", "etc", "vs"}


def paths_in(text: str) -> list[tuple[int, str]]:
    """File paths named in `text`, with where each starts, in order. A backticked path may hold spaces
    (`notes/my file.md`); a bare one ends at whitespace. `./a.md` is given as `a.md`."""
    found: list[tuple[int, str]] = []
    for m in _TICKED.finditer(text):
        if _FILE.fullmatch(m.group(1).strip().replace(" ", "_")):
            found.append((m.start(1), m.group(1).strip()))
    blanked = _TICKED.sub(lambda m: " " * len(m.group(0)), text)  # keep offsets
    found += [(m.start(1), m.group(1)) for m in _FILE.finditer(blanked)]
    out = [(at, p[2:] if p.startswith("./") else p) for at, p in sorted(found)]
    return [(at, p) for at, p in out if p.lower() not in _NOT_FILES]
_TICKS = re.compile(r"`([^`\n]+)`")
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_URL = re.compile(r"https?://\S+")
_EXIT = re.compile(r"exit code: (-?\d+)\s*$")


@dataclass(frozen=True)
class Claim:
    kind: str  # "file" | "command"
    subject: str
    kept: bool
    why: str


def file_claims(text: str) -> list[str]:
    """Files the answer says it wrote: those whose nearest verb before them is a writing verb
    ("read a.md and wrote b.md" claims b.md only; "could not write c.md" claims nothing)."""
    found: list[str] = []
    for sentence in _SENTENCES.split(_URL.sub(" ", text)):
        writes = [(m.start(), not _NEGATION.search(sentence[: m.start()])) for m in _WRITE.finditer(sentence)]
        verbs = sorted(writes + [(m.start(), False) for m in _OTHER.finditer(sentence)])
        for start, name in paths_in(sentence):
            before = [is_write for at, is_write in verbs if at < start]
            if before and before[-1] and name not in found:
                found.append(name)
    return found


def command_claims(text: str) -> list[str]:
    found: list[str] = []
    for sentence in _SENTENCES.split(text):
        if _PASS.search(sentence):
            for command in _TICKS.findall(sentence):
                if " " in command.strip() or command.strip().isidentifier():  # `pytest`, `make test`
                    if not _FILE.fullmatch(command.strip()) and command not in found:
                        found.append(command.strip())
    return found


def _shell_runs(messages: list[Message]) -> dict[str, int | None]:
    """Last exit code of each shell command run in the session."""
    calls = {c.id: c.arguments.get("command", "") for m in messages if m.role == "assistant" for c in m.tool_calls if c.name == "shell"}
    runs: dict[str, int | None] = {}
    for m in messages:
        result = m.tool_result_part if m.role == "tool" else None
        if result is not None and result.call_id in calls:
            code = _EXIT.search(result.content.strip())
            runs[str(calls[result.call_id]).strip()] = int(code.group(1)) if code else None
    return runs


def _written_in_session(messages: list[Message], root: Path) -> set[Path]:
    """Paths a file tool wrote successfully in this session's history."""
    calls = {c.id: c for m in messages if m.role == "assistant" for c in m.tool_calls if c.name in ("write_file", "edit_file")}
    done: set[Path] = set()
    for m in messages:
        result = m.tool_result_part if m.role == "tool" else None
        if result is not None and result.call_id in calls and not result.is_error:
            done.add((root / str(calls[result.call_id].arguments.get("path", ""))).resolve())
    return done


def check_promises(final_text: str, messages: list[Message], cwd: Path, since: float | None = None) -> list[Claim]:
    """Each checkable claim of the answer and whether it holds. A file counts as written when a file
    tool wrote it in this session, or it changed after `since` (the run's start, wall-clock seconds,
    for writes made through `shell`); a file that merely existed before is not a kept promise."""
    claims: list[Claim] = []
    root = cwd.resolve()
    written = _written_in_session(messages, root)
    for name in file_claims(final_text):
        path = (root / name).resolve()
        if not path.is_relative_to(root):
            claims.append(Claim("file", name, False, "outside the working directory"))
        elif not path.exists():
            claims.append(Claim("file", name, False, "does not exist"))
        elif path.is_file() and path.stat().st_size == 0:
            claims.append(Claim("file", name, False, "is empty"))
        elif path in written or (since is not None and path.stat().st_mtime >= since):
            claims.append(Claim("file", name, True, "exists"))
        elif since is None:
            claims.append(Claim("file", name, True, "exists"))
        else:
            claims.append(Claim("file", name, False, "was not written during this session (it existed before)"))
    runs = _shell_runs(messages)
    for command in command_claims(final_text):
        code = runs.get(command)
        if command not in runs:
            claims.append(Claim("command", command, False, "was never run in this session"))
        elif code != 0:
            claims.append(Claim("command", command, False, f"last exited {code}"))
        else:
            claims.append(Claim("command", command, True, "last exited 0"))
    return claims

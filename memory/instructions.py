"""Project instructions: the AGENTS.md (or CLAUDE.md) files a user writes for agents — the project's
conventions, how to build and test — found from the working directory up to the repository root.

In each folder from the repository's root down to the working directory, the first of
`instructions.names` that is a file is read (AGENTS.md, else CLAUDE.md); the nearer a file is to the
working directory, the later it comes, and where two disagree the nearer one wins. Without a
repository only the working directory is looked at.

The agent can write files in the working directory, so an instruction file could be its way into
every later run's prompt, around the scan that guards memory. So a file is obeyed only as the user
accepted it, as direnv does with `.envrc`: `arreio instructions accept` scans it (memory/scan.py)
and records its digest in the state folder (`instructions.json`, which the agent cannot write; a
`arreio batch` attempt starts with the driver's). An accepted text is obeyed wherever it lies; a file
that is new or changed since is left out of the prompt, and the run says so in one line naming it;
`arreio instructions show` shows what would be read and what waits (a changed file as a diff).

```yaml
instructions:
  enabled: true                  # false: no instruction file is read
  names: [AGENTS.md, CLAUDE.md]  # per folder, the first that exists
```
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.config import Settings, parse_section

RECORD = "instructions.json"
VERSION = 1
EARLIER = 50  # earlier accepted texts of one file kept accepted (their digests)
MAX_BYTES = 256_000  # an instruction file larger than this is read up to here (the prompt block caps it again)

State = Literal["accepted", "new", "changed"]


class InstructionsSettings(BaseModel):
    """`instructions:` (module docstring)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="Read the project's instruction files into a new session's prompt.")
    names: list[str] = Field(
        default_factory=lambda: ["AGENTS.md", "CLAUDE.md"],
        description="File names looked for in each folder, the first found wins.",
    )


def instructions_settings(settings: Settings) -> InstructionsSettings:
    return parse_section(InstructionsSettings, settings.instructions, "instructions")


@dataclass
class InstructionFile:
    """One instruction file as found now: where, its text and digest, and whether the user accepted it."""

    path: Path  # absolute, as found (the folder's entry; a link is followed for the text)
    shown: str  # as a user reads it from the working directory
    text: str
    digest: str
    state: State

    @property
    def obeyed(self) -> bool:
        return self.state == "accepted"


def digest_of(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def repository_root(cwd: Path) -> Path | None:
    """The nearest folder at or above `cwd` holding a `.git` (a folder, or a file: worktrees)."""
    for folder in (cwd, *cwd.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def locate(cwd: Path, names: list[str]) -> list[Path]:
    """The instruction files in play, root first, the working directory's last (module docstring)."""
    cwd = cwd.resolve()
    root = repository_root(cwd)
    folders = [cwd] if root is None else [cwd, *[p for p in cwd.parents if p.is_relative_to(root)]]
    found: list[Path] = []
    for folder in reversed(folders):
        for name in names:
            candidate = folder / name
            if candidate.is_file():
                found.append(candidate)
                break
    return found


def _read(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def load_accepted(state: Path) -> dict[str, dict[str, Any]]:
    """The accepted digests, by absolute path ({} when none or unreadable: nothing is obeyed then)."""
    try:
        data = json.loads((state / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    accepted = data.get("accepted") if isinstance(data, dict) else None
    return {k: v for k, v in accepted.items() if isinstance(v, dict)} if isinstance(accepted, dict) else {}


def survey(cwd: Path, state: Path, settings: InstructionsSettings) -> list[InstructionFile]:
    """Every instruction file in play, read, with its state against the accepted digests."""
    if not settings.enabled:
        return []
    accepted = load_accepted(state)
    texts = {d for record in accepted.values() for d in [record.get("digest"), *_listed(record.get("earlier"))]}
    out: list[InstructionFile] = []
    for path in locate(cwd, settings.names):
        text = _read(path)
        if text is None or not text.strip():
            continue
        digest = digest_of(text)
        # A text the user accepted is obeyed wherever it is (a batch attempt's copy of the project, a
        # moved file); any other is new, or changed when this file was accepted with another text.
        status: State = "accepted" if digest in texts else ("changed" if str(path) in accepted else "new")
        out.append(InstructionFile(path, _shown(path, cwd), text, digest, status))
    return out


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _shown(path: Path, cwd: Path) -> str:
    """`AGENTS.md`, `../AGENTS.md`: as a user at the working directory names it."""
    return os.path.relpath(path, cwd.resolve())


def accept(files: list[InstructionFile], state: Path, at: str, *, durable: bool = True) -> None:
    """Record `files` as the user accepted them (their digests now), keeping the other records."""
    accepted = load_accepted(state)
    for f in files:  # the text too, so a later change can be shown as a diff against it
        before = accepted.get(str(f.path), {})
        # Texts accepted before stay accepted: switching back to a branch whose AGENTS.md you accepted
        # does not ask again.
        known = [before.get("digest"), *_listed(before.get("earlier"))]
        earlier = [d for d in known if isinstance(d, str) and d != f.digest]
        accepted[str(f.path)] = {"digest": f.digest, "at": at, "text": f.text, "earlier": earlier[:EARLIER]}
    state.mkdir(parents=True, exist_ok=True)
    body = json.dumps({"version": VERSION, "accepted": accepted}, indent=1, sort_keys=True) + "\n"
    write_atomic(state / RECORD, body, durable=durable)


def changes(f: InstructionFile, state: Path) -> str:
    """A changed file as a unified diff against the text the user accepted ("" for any other)."""
    if f.state != "changed":
        return ""
    import difflib

    before = str(load_accepted(state).get(str(f.path), {}).get("text", ""))
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            f.text.splitlines(keepends=True),
            f"{f.shown} (accepted)",
            f"{f.shown} (now)",
        )
    )


def notice(f: InstructionFile) -> str:
    """The one line a run says about a file it does not obey."""
    why = "is new here" if f.state == "new" else "changed since you accepted it"
    return (
        f"{f.shown} {why}: not obeyed until you accept it — review it with `arreio instructions show`, "
        "then `arreio instructions accept`"
    )


def render(files: list[InstructionFile]) -> str:
    """The prompt block: each obeyed file under its name, root first, nearest last."""
    obeyed = [f for f in files if f.obeyed]
    if not obeyed:
        return ""
    head = (
        "Project instructions, written by the user for agents working here (from the repository root down to "
        "the working directory; where two disagree, the later one, nearer the working directory, wins):"
    )
    return "\n\n".join([head, *[f"## {f.shown}\n\n{f.text.strip()}" for f in obeyed]])

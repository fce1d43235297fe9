"""What a final answer promises, checked against what exists (docs/architecture.md invariants 6 and 9).

The server checks; the model does not promise. `claims.py` reads the few clear claims an answer
makes (files it wrote; `passes.py`: commands it says pass); this module holds each against the world:
- a claimed file must exist, not be empty, and have been written in this session (by a file tool,
  or changed since the run started) — a file that was only there before is not a kept promise;
- a claimed command must have been run with `shell` in this session, its last run exiting 0;
- a claimed act (`acts.py`: a tool used, a file read, a folder listed, a search, a run of the tests)
  must have a tool call in this session that did it (`calls.py`).
Where the evidence itself is in doubt — the history was compacted, the result was pruned, another
agent or tool may have done the work, the path lies outside the working directory — the claim is
left unchecked: a false alarm costs more than a miss.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from arreio.engine.core.messages import Message
from arreio.engine.core.ports import RunChanges
from arreio.engine.core.prose import paths_in
from arreio.engine.core.summary import is_summary
from arreio.engine.judgement.acts import act_claims
from arreio.engine.judgement.calls import Calls, ShellRun, act_claim, alike, last_run, shell_runs
from arreio.engine.judgement.claims import Claim, file_claims
from arreio.engine.judgement.passes import command_claims

__all__ = ["Claim", "check_promises", "command_claims", "file_claims", "paths_in"]

# Tools that only look or write files: a command the session never ran through `shell` cannot have
# been run by them. Any other tool (a sub-agent, an MCP server) might have run it — then we back off.
_LOOKING_TOOLS = {
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "grep",
    "web_fetch",
    "web_search",
    "brave",
    "tool-report",
}
# Files that are empty by convention: an empty one is what was meant.
_EMPTY_BY_DESIGN = {"__init__.py", "__init__.pyi", "py.typed", ".gitkeep", ".keep", ".nojekyll", "conftest.py"}
# Timestamps on some file systems are whole (or even two) seconds: a write in the run's first
# moments may carry a time just before its start.
_CLOCK_SLACK_S = 2.0
_REMOVAL = re.compile(r"\b(?:deleted|removed|renamed|moved|discarded|cleaned up|rm)\b", re.IGNORECASE)
_WALK_LIMIT = 20_000
_NOT_WALKED = {
    ".git",
    ".arreio",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
}


def _written_in_session(messages: list[Message], root: Path) -> set[Path]:
    """Paths a file tool wrote successfully in this session's history."""
    calls = {
        c.id: c
        for m in messages
        if m.role == "assistant"
        for c in m.tool_calls
        if c.name in ("write_file", "edit_file")
    }
    done: set[Path] = set()
    for m in messages:
        result = m.tool_result_part if m.role == "tool" else None
        if result is not None and result.call_id in calls and not result.is_error:
            done.add((root / str(calls[result.call_id].arguments.get("path", ""))).resolve())
    return done


def check_promises(
    final_text: str, messages: list[Message], cwd: Path, since: float | None = None, changes: RunChanges | None = None
) -> list[Claim]:
    """Each checkable claim of the answer and whether it holds. A file counts as written when a file
    tool wrote it in this session, or the run's records (`changes`: the checkpoints, when the session
    began with this run) say it changed, or — when they cannot tell — it changed (content or entry:
    mtime or ctime) after `since`, the run's start in wall-clock seconds; without `since`, existing is
    enough. Claims whose evidence is in doubt are left out."""
    root = cwd.resolve()
    written = _written_in_session(messages, root)
    claims = [c for name in file_claims(final_text) if (c := _file(name, root, written, since, changes)) is not None]
    if _REMOVAL.search(final_text):  # "Created tmp/probe.py, then removed it": gone, and said so
        claims = [c for c in claims if c.why != "does not exist"]
    runs = shell_runs(messages)
    cannot_tell = any(is_summary(m) for m in messages) or any(
        c.name not in _LOOKING_TOOLS and c.name != "shell"
        for m in messages
        if m.role == "assistant"
        for c in m.tool_calls
    )
    commands = command_claims(final_text)
    claims += [c for command in commands if (c := _command(command, runs, cannot_tell)) is not None]
    calls = Calls(messages)
    acts = [a for a in act_claims(final_text) if not (a.kind == "command" and a.subject in commands)]
    claims += [c for act in acts if (c := act_claim(act, calls)) is not None]
    return claims


def _file(name: str, root: Path, written: set[Path], since: float | None, changes: RunChanges | None) -> Claim | None:
    path = (root / name).resolve()
    if not path.is_relative_to(root):
        return None  # not ours to check: the agent's tools write only in the working directory
    if not path.exists():
        found = _elsewhere(name, root, written, since)
        if found is None:
            return None  # the tree was too big to search: in doubt
        if not found:
            return Claim("file", name, False, "does not exist")
        verdicts = [_judge(name, p, root, written, since, changes) for p in found]
        return next((v for v in verdicts if v.kept), verdicts[0])
    return _judge(name, path, root, written, since, changes)


def _judge(
    name: str, path: Path, root: Path, written: set[Path], since: float | None, changes: RunChanges | None
) -> Claim:
    if path.is_file() and path.stat().st_size == 0 and path.name not in _EMPTY_BY_DESIGN:
        return Claim("file", name, False, "is empty")
    if since is None or path in written:
        return Claim("file", name, True, "exists")
    recorded = changes.state(path.relative_to(root).as_posix()) if changes is not None and path.is_file() else None
    if recorded == "changed":
        return Claim("file", name, True, "exists")
    if recorded == "unchanged":
        return Claim("file", name, False, "was not written during this run (it is as it was before)")
    if _changed_since(path, since):
        return Claim("file", name, True, "exists")
    return Claim("file", name, False, "was not written during this session (it existed before)")


def _changed_since(path: Path, since: float) -> bool:
    # ctime too: a file moved or copied in with its old mtime (`mv`, `cp -p`, an archive) is still new.
    st = path.stat()
    return max(st.st_mtime, st.st_ctime) >= since - _CLOCK_SLACK_S


def _elsewhere(name: str, root: Path, written: set[Path], since: float | None) -> list[Path] | None:
    """Files the answer may mean by a name that is not there as given: one written in the session
    whose path ends with it, or one in the tree that does (any case: "notes.md" for NOTES.md).
    None when the tree is too big to tell."""
    tail = "/" + name.lower().lstrip("/")
    found = [p for p in written if p.exists() and ("/" + p.relative_to(root).as_posix().lower()).endswith(tail)]
    if found:
        return found
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _NOT_WALKED]
        seen += len(files) + len(dirs)
        if seen > _WALK_LIMIT:
            return None
        here = Path(folder)
        found += [here / f for f in files if ("/" + (here / f).relative_to(root).as_posix().lower()).endswith(tail)]
    return found


def _command(command: str, runs: list[ShellRun], cannot_tell: bool) -> Claim | None:
    run = last_run(command, runs)
    if run is None:
        if cannot_tell or any(alike(command, r.command) for r in runs):
            return None  # run under another spelling ("pytest -q tests/" for `pytest -q`), or by someone else
        return Claim("command", command, False, "was never run in this session")
    if run.refused:
        return Claim("command", command, False, "never ran (it was refused or cancelled)")
    if run.timed_out:
        return Claim("command", command, False, "timed out")
    if run.pruned or run.code is None:
        return None  # its outcome is not in the history any more (or never was): in doubt
    if run.code != 0:
        return Claim("command", command, False, f"last exited {run.code}")
    return Claim("command", command, True, "last exited 0")

"""Files outside `.git` that git runs or reads as its own config, named from the repository's config.

`.git` is protected, but a repository can point out of it into the working tree: husky's
`core.hooksPath = .husky`, `.git/hooks` linked to a tracked `githooks/`, `[include] path =
../.gitconfig-shared`, a `diff.x.textconv = ./tools/conv.sh`. Writing one of those is writing code
the user's next `git commit` or `git diff` runs, so each is protected like `.git` itself.

Read with a small, tolerant reader of git's config format (no git process: this runs for every write
the agent makes), cached by the config file's size and time; includes are followed, at most 10 deep.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

_MAX_BYTES = 1 << 20
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
# Keys whose value is a path git reads or runs; and keys whose value is a command (its first word may
# be a path). Keys are `section.key`, with any subsection dropped, lower case.
_PATH_KEYS = {"core.hookspath", "include.path", "includeif.path", "core.attributesfile"}
_COMMAND_KEYS = {
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.askpass",
    "sequence.editor",
    "diff.textconv",
    "diff.command",
    "diff.external",
    "filter.clean",
    "filter.smudge",
    "filter.process",
    "merge.driver",
    "credential.helper",
    "gpg.program",
    "pager.log",
    "pager.diff",
    "pager.show",
    "alias.*",
}
_INCLUDES = {"include.path", "includeif.path"}


def pointed_paths(git: Path, worktree: Path) -> list[Path]:
    """What the repository at `git` (a `.git` folder, or the folder a `.git` file names) makes git
    read or run from inside `worktree`, resolved; `.git/hooks`, `config` and `info` links included."""
    try:
        stamp = os.stat(git / "config")
        key = (stamp.st_size, stamp.st_mtime_ns)
    except OSError:
        key = None
    return list(_pointed(str(git), str(worktree), key, _links(git)))


def _links(git: Path) -> tuple[str, ...]:
    out = []
    for name in ("hooks", "config", "info"):
        path = git / name
        if path.is_symlink():
            out.append(os.path.realpath(path))
    return tuple(out)


@lru_cache(maxsize=64)
def _pointed(git: str, worktree: str, _stamp: object, links: tuple[str, ...]) -> tuple[Path, ...]:
    root = Path(worktree)
    found: list[Path] = [Path(p) for p in links]
    seen: set[str] = set()
    queue = [(Path(git) / "config", Path(git))]
    while queue and len(seen) < 10:
        config, base = queue.pop(0)
        if str(config) in seen:
            continue
        seen.add(str(config))
        for key, value in _entries(config):
            if key in _PATH_KEYS:
                path = _as_path(value, base if key in _INCLUDES else root)
                if path is not None:
                    found.append(path)
                    if key in _INCLUDES:
                        queue.append((path, path.parent))
            elif key in _COMMAND_KEYS or key.startswith("alias."):
                first = value.lstrip("!").strip().split(" ", 1)[0] if value.strip() else ""
                if "/" in first:
                    path = _as_path(first, root)
                    if path is not None:
                        found.append(path)
    out: list[Path] = []
    for path in found:
        real = Path(os.path.realpath(path))
        if (real == root or real.is_relative_to(root)) and real not in out:
            out.append(real)
    return tuple(out)


def _as_path(value: str, base: Path) -> Path | None:
    text = value.strip()
    if not text:
        return None
    if text.startswith("~/"):
        text = os.path.expanduser(text)
    return Path(text) if os.path.isabs(text) else base / text


def _entries(config: Path) -> list[tuple[str, str]]:
    """(`section.key`, value) pairs of a git config file, subsections dropped; [] when unreadable."""
    try:
        if not os.path.isfile(config):  # a FIFO would block the open
            return []
        with open(config, "rb") as handle:
            raw = handle.read(_MAX_BYTES)
    except OSError:
        return []
    out: list[tuple[str, str]] = []
    section = ""
    for line in raw.decode("utf-8", "replace").splitlines():
        head = _SECTION.match(line)
        if head:
            section = head.group(1).lower().split(".", 1)[0]
            line = line[head.end() :]
            if not line.strip():
                continue
        entry = _ENTRY.match(line)
        if entry and section:
            name = entry.group(1).lower()
            out.append((f"{section}.{name}", _value(entry.group(2) or "")))
    return out


def _value(text: str) -> str:
    """A value without its comment and quotes (git's rules, enough for paths and commands)."""
    out, quoted, i = [], False, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            quoted = not quoted
        elif c in "#;" and not quoted:
            break
        elif c == "\\" and i + 1 < len(text):
            i += 1
            out.append({"n": "\n", "t": "\t"}.get(text[i], text[i]))
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()

"""grep: a Python-regex search over the text files of the working directory.

Walks in sorted order (stable output for the same tree), never leaves the root (symlinked files
pointing outside are skipped, symlinked directories are not followed) and skips folders that are
noise for a model: version control, our state, dependencies, caches.
"""

from __future__ import annotations

import asyncio
import fnmatch
import io
import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core.regular_file import NotRegularFile, kind, open_regular
from arreio.engine.tools.base import Tool, ToolError, ToolResult
from arreio.engine.tools.encoding import SNIFF_BYTES, Encoding, sniff
from arreio.engine.tools.pattern import MATCH_BUDGET_S, BoundedPattern
from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.workspace import display_path, resolve_in_root

SKIP_DIRS = frozenset({".git", ".arreio", "node_modules", "__pycache__", ".venv"})
MAX_MATCH_LINE_CHARS = 500
# Past this size a file is most likely data or a build artifact, not something to grep.
MAX_FILE_BYTES = 10 * 1024 * 1024
TOO_BIG, BINARY = "too big", "binary"  # why a file was not searched


class GrepInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1)
    path: str = "."
    glob: str | None = Field(None, description="e.g. '*.py'")


class Grep(Tool):
    name = "grep"
    description = "Search the text files under `path` for a Python regex; prints path:line: text."
    input_model = GrepInput
    repeat = "few"
    read_only = True

    async def execute(self, args: GrepInput, ctx: RunContext) -> ToolResult:
        # Well under the chain's own timeout, so a slow pattern is named as the reason: on a loaded
        # machine the regex engine overshoots its timeout (seen: 3.5 s for 2.4 s at load 5).
        budget = min(MATCH_BUDGET_S, 0.5 * ctx.settings.tools.timeout_s)
        pattern = BoundedPattern(args.pattern, tool=self.name, budget_s=budget)
        cap = ctx.settings.tools.grep_max_matches
        return await asyncio.to_thread(_search, ctx.cwd, pattern, args.path, args.glob, cap)


def _search(root: Path, regex: BoundedPattern, path: str, glob: str | None, cap: int) -> ToolResult:
    target = resolve_in_root(root, path)
    shown_target = display_path(root, target)
    try:
        special = kind(target.stat().st_mode)
    except OSError:
        raise ToolError(f"no such file or directory: {shown_target}; use list_dir to look around") from None
    if special not in (None, "a directory"):
        raise ToolError(f"{NotRegularFile(special).because(shown_target)}; grep searches regular files")
    base = root.resolve()
    patterns = _expand_braces(glob) if glob else []

    shown: list[str] = []
    total = 0
    files_with_hits = 0
    not_utf8: dict[str, list[str]] = {}  # encoding assumed → files with hits decoded that way
    too_big: list[str] = []
    for file in _walk(target, base):
        rel = display_path(root, file)
        if patterns and not _glob_match(rel, patterns):
            continue
        hits, encoding = _grep_file(file, regex)
        if isinstance(encoding, str):  # not searched: a big file is said, so "no matches" is not read as absence
            if encoding == TOO_BIG:
                too_big.append(rel)
            elif special is None:  # a binary file named on its own (in a folder, skipping them is the rule)
                raise ToolError(f"{rel} is a binary file; grep searches text files")
            continue
        if hits:
            files_with_hits += 1
            if encoding.why:
                not_utf8.setdefault(encoding.name, []).append(rel)
        for number, line in hits:
            total += 1
            if len(shown) < cap:
                if len(line) > MAX_MATCH_LINE_CHARS:
                    line = line[:MAX_MATCH_LINE_CHARS] + " [… cut]"
                shown.append(f"{rel}:{number}: {line}")

    where = shown_target + (f" (glob {glob})" if glob else "")
    unsearched = (
        (
            f"\n[not searched, larger than {MAX_FILE_BYTES >> 20} MB: {', '.join(too_big[:10])}"
            f"{' …' if len(too_big) > 10 else ''}; read_file pages through one]"
        )
        if too_big
        else ""
    )
    if total == 0:
        return ToolResult(f"no matches for /{regex.pattern}/ in {where}{unsearched}")
    body = "\n".join(shown) + unsearched
    for name, files in not_utf8.items():  # say what was assumed, never silent U+FFFD
        body += f"\n[not UTF-8, decoded as {name}: {', '.join(files[:10])}{' …' if len(files) > 10 else ''}]"
    if total > cap:
        body += f"\n[showing {cap} of {total} matches in {files_with_hits} files; narrow the pattern, path or glob]"
    return ToolResult(body)


def _walk(target: Path, base: Path):
    """Files under `target` in sorted order, never following a link out of `base`."""
    if target.is_file():
        yield target
        return
    for dirpath, dirnames, filenames in os.walk(target, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            file = Path(dirpath) / name
            if file.is_symlink():
                try:
                    real = file.resolve()
                except (OSError, RuntimeError):
                    continue
                if not real.is_relative_to(base) or not real.is_file():
                    continue
            yield file


def _grep_file(file: Path, regex: BoundedPattern) -> tuple[list[tuple[int, str]], Encoding | str]:
    """The matching lines of a text file and the encoding it was read in; for a file not searched,
    why (`TOO_BIG`, `BINARY`). Only a regular file is opened: a FIFO in the tree would block the
    walk's thread in `open()`, beyond the reach of the tool's timeout, and keep the process from
    ever exiting."""
    plain = Encoding("utf-8")
    try:
        fd, info = open_regular(file)
    except (OSError, NotRegularFile):  # unreadable, vanished mid-walk, a pipe: not the model's problem
        return [], plain
    try:
        with open(fd, "rb") as raw:
            if info.st_size > MAX_FILE_BYTES:
                return [], TOO_BIG
            encoding = sniff(raw.read(SNIFF_BYTES))
            if encoding is None:
                return [], BINARY
            raw.seek(0)
            hits = []
            with io.TextIOWrapper(raw, encoding=encoding.name, errors="replace") as text:
                for number, line in enumerate(text, start=1):
                    line = line.rstrip("\r\n")
                    if regex.search(line):
                        hits.append((number, line))
        return hits, encoding
    except OSError:
        return [], plain


def _expand_braces(glob: str) -> list[str]:
    """'*.{js,ts}' → ['*.js', '*.ts'] (one level, the form models use)."""
    match = re.search(r"\{([^{}]*)\}", glob)
    if not match:
        return [glob]
    head, tail = glob[: match.start()], glob[match.end() :]
    out: list[str] = []
    for option in match.group(1).split(","):
        out.extend(_expand_braces(head + option + tail))
    return out


def _glob_match(rel: str, patterns: list[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    for pattern in patterns:
        if "/" in pattern:
            # fnmatch's '*' also crosses '/', so 'src/*.py' and 'src/**/*.py' both reach deep.
            if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern.replace("**/", "")):
                return True
        elif fnmatch.fnmatchcase(name, pattern):
            return True
    return False

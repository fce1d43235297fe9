"""File tools: read_file, write_file, edit_file, list_dir (grep lives in `search.py`).

All of them stay inside the working directory (`workspace.resolve_in_root`) and write atomically.
Their names and argument names are public API: models and saved sessions refer to them.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import stat
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core.atomic import write_atomic
from arreio.engine.core.regular_file import NotRegularFile, kind, open_regular, read_to_end
from arreio.engine.core.wording import counted
from arreio.engine.tools.base import Tool, ToolError, ToolResult
from arreio.engine.tools.encoding import SNIFF_BYTES, Encoding, sniff
from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.workspace import check_writable, display_path, resolve_in_root, shown_name

MAX_LINE_CHARS = 2000
LIST_DIR_CAP = 500
INLINE_READ_BYTES = 64 * 1024  # a read this small takes well under a millisecond
EDIT_SNIPPET_LINES = 20
# Listed as entries, never looked into: version control and our own state.
OPAQUE_DIRS = frozenset({".git", ".arreio"})


def _open(target: Path, shown: str) -> tuple[int, os.stat_result]:
    """`open_regular`, its refusals worded for the model. A FIFO, a device, a socket is refused from
    its stat, never opened to be waited on (a thread stuck in `open()` kept the process alive)."""
    try:
        return open_regular(target)
    except FileNotFoundError:
        raise ToolError(f"file not found: {shown}. Use list_dir to see which files exist.") from None
    except NotRegularFile as error:
        if error.kind == "a directory":
            raise ToolError(f"{shown} is a directory, not a file; use list_dir to see its entries") from None
        raise ToolError(f"{error.because(shown)}; file tools read regular files only") from None
    except OSError as exc:
        raise ToolError(f"cannot read {shown}: {exc.strerror or exc}") from None


def _read_regular(target: Path, shown: str, cap: int | None = None) -> bytes | None:
    """The whole of a regular file, with one open, or None when it is larger than `cap` (read_file
    reads those in a thread; a small read is cheaper on the loop than a hand-off)."""
    fd, info = _open(target, shown)
    try:
        if cap is not None and info.st_size > cap:
            return None
        return read_to_end(fd, info.st_size, None if cap is None else cap + 1)
    except OSError as exc:
        raise ToolError(f"cannot read {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _text_lines(data: bytes, encoding: str) -> list[str]:
    """The lines of a file's bytes as reading it in text mode gives them (universal newlines: `\r\n`
    and `\r` end a line too), without their line ends."""
    text = data.decode(encoding, errors="replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the file ends with a line end (or is empty): no line after it
    return lines


def _count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _numbered(number: int, line: str) -> str:
    if len(line) > MAX_LINE_CHARS:
        line = line[:MAX_LINE_CHARS] + f" [… line cut, {len(line)} chars in all]"
    return f"{number:>6}\t{line}"


# ── read_file ───────────────────────────────────────────────────────────────────────────────


class ReadFileInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    offset: int | None = Field(None, ge=1, description="First line (1-based).")
    limit: int | None = Field(None, ge=1, description="Default 2000.")


class ReadFile(Tool):
    name = "read_file"
    description = "Read a text file; lines come numbered (number, tab, text)."
    input_model = ReadFileInput
    repeat = "per_target"
    read_only = True

    async def execute(self, args: ReadFileInput, ctx: RunContext) -> ToolResult:
        limit, offset = args.limit or ctx.settings.tools.read_limit_lines, args.offset or 1
        # Resolving the path here is no new blocking: policy has resolved it on the loop already.
        target = resolve_in_root(ctx.cwd, args.path, root_resolved=True)
        shown = display_path(ctx.cwd, target, root_resolved=True)
        data = _read_regular(target, shown, INLINE_READ_BYTES)
        if data is not None:  # a bounded read: cheaper inline than a thread hand-off
            encoding = sniff(data[:SNIFF_BYTES])
            if encoding is None:
                raise ToolError(f"{shown} is a binary file ({len(data)} bytes); read_file shows text only")
            return _page(_text_lines(data, encoding.name), encoding, shown, offset, limit)
        # A large regular file streams in a thread, so the chain's timeout can fire.
        return await asyncio.to_thread(self._read, target, shown, offset, limit)

    def _read(self, target: Path, shown: str, offset: int, limit: int) -> ToolResult:
        fd, info = _open(target, shown)  # opened again, checked again: it may have changed since
        try:
            with open(fd, "rb") as raw:
                return self._read_lines(raw, info.st_size, shown, offset, limit)
        except OSError as exc:
            raise ToolError(f"cannot read {shown}: {exc.strerror or exc}") from None

    def _read_lines(self, raw: BinaryIO, size: int, shown: str, offset: int, limit: int) -> ToolResult:
        encoding = sniff(raw.read(SNIFF_BYTES))
        if encoding is None:
            raise ToolError(f"{shown} is a binary file ({size} bytes); read_file shows text only")
        raw.seek(0)
        shown_lines: list[str] = []
        total = 0
        # Stream the file so a huge log costs only the lines we show, yet we still learn N. A byte the
        # sniffed encoding cannot decode (past the sniffed head) is replaced, not fatal.
        with io.TextIOWrapper(raw, encoding=encoding.name, errors="replace") as fh:
            for total, line in enumerate(fh, start=1):
                if offset <= total < offset + limit:
                    shown_lines.append(line.rstrip("\r\n"))
        return _shown(shown_lines, total, encoding, shown, offset)


def _page(lines: list[str], encoding: Encoding, shown: str, offset: int, limit: int) -> ToolResult:
    """A small file's page, as `_read_lines` shows a streamed one."""
    return _shown(lines[offset - 1 : offset - 1 + limit], len(lines), encoding, shown, offset)


def _shown(lines: list[str], total: int, encoding: Encoding, shown: str, offset: int) -> ToolResult:
    """`lines` (from line `offset` on, of `total`) numbered, with the notes the model needs."""
    if total == 0:
        return ToolResult(f"[{shown} is empty]")
    if offset > total:
        raise ToolError(f"offset {offset} is past the end of {shown}, which has {total} lines")
    last = offset + len(lines) - 1
    numbered = [_numbered(number, line) for number, line in enumerate(lines, start=offset)]
    body = "\n".join(([encoding.note(shown)] if encoding.why else []) + numbered)
    if offset == 1 and last == total:
        return ToolResult(body)
    note = f"[showing lines {offset}–{last} of {total}"
    note += f"; use offset={last + 1} to read on]" if last < total else "]"
    return ToolResult(f"{body}\n{note}")


# ── write_file ──────────────────────────────────────────────────────────────────────────────


class WriteFileInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    content: str = Field(description="The whole new content.")


class WriteFile(Tool):
    name = "write_file"
    description = (
        "Create or overwrite a whole file (missing folders are made). To change part of a file, use edit_file."
    )
    input_model = WriteFileInput
    repeat = "per_target"
    # Writes stay inside the working directory; governance adds allow-lists on top.
    sensitive = False

    async def execute(self, args: WriteFileInput, ctx: RunContext) -> ToolResult:
        target = resolve_in_root(ctx.cwd, args.path, root_resolved=True)
        check_writable(ctx, target, self.name)
        shown = display_path(ctx.cwd, target, root_resolved=True)
        try:
            found = kind(target.stat().st_mode)
        except OSError:  # not there yet (or a dangling link): created
            found = None
        if found == "a directory":
            raise ToolError(f"{shown} is a directory; give a file path")
        if found is not None:  # a FIFO, socket or device the user had is never replaced by a file
            raise ToolError(f"{shown} is {found}, not a regular file; write_file replaces only regular files")
        existed = target.exists()
        data = args.content.encode("utf-8")
        blocker = next((p for p in target.parents if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            where = display_path(ctx.cwd, blocker, root_resolved=True)
            raise ToolError(f"cannot create {shown}: a parent of it, {where}, is a file")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data)
        except OSError as exc:
            raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from None
        verb = "overwrote" if existed else "created"
        lines = _count_lines(args.content)
        return ToolResult(f"{verb} {shown} ({counted(len(data), 'byte')}, {counted(lines, 'line')})")


# ── edit_file ───────────────────────────────────────────────────────────────────────────────


class EditFileInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    old: str = Field(min_length=1)
    new: str


_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t", re.MULTILINE)


class EditFile(Tool):
    name = "edit_file"
    description = (
        "Replace `old` with `new` in a file; `old` must occur exactly once, whitespace included, without line numbers."
    )
    input_model = EditFileInput
    repeat = "per_target"

    async def execute(self, args: EditFileInput, ctx: RunContext) -> ToolResult:
        target = resolve_in_root(ctx.cwd, args.path, root_resolved=True)
        shown = display_path(ctx.cwd, target, root_resolved=True)
        raw = _read_regular(target, shown) or b""  # no cap, so never None; a missing file or a pipe is refused
        check_writable(ctx, target, self.name)
        if b"\0" in raw[:8192]:
            raise ToolError(f"{shown} is a binary file; edit_file edits text only")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{shown} is not UTF-8 text; edit_file cannot edit it safely") from None
        old, new = args.old, args.new
        if old == new:
            raise ToolError("old and new are identical; there is nothing to change")
        # A CRLF file read through read_file shows plain lines; match the file's line endings.
        if "\r\n" in text and "\r\n" not in old and "\n" in old:
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")

        starts = _find_all(text, old)
        if not starts:
            raise ToolError(_no_match_message(text, old, shown))
        if len(starts) > 1:
            lines = ", ".join(str(_line_of(text, s)) for s in starts[:20])
            more = "…" if len(starts) > 20 else ""
            raise ToolError(
                f"old occurs {len(starts)} times in {shown} (at lines {lines}{more}); "
                "include more surrounding lines in old so it matches exactly once"
            )

        start = starts[0]
        updated = text[:start] + new + text[start + len(old) :]
        try:
            write_atomic(target, updated.encode("utf-8"))
        except OSError as exc:
            raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from None
        return ToolResult(_edit_summary(shown, updated, start, old, new))


def _find_all(text: str, needle: str) -> list[int]:
    """Every start of `needle`, overlapping ones included ("aa" in "aaa" is two matches)."""
    found: list[int] = []
    pos = text.find(needle)
    while pos != -1:
        found.append(pos)
        pos = text.find(needle, pos + 1)
    return found


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _no_match_message(text: str, old: str, shown: str) -> str:
    message = f"old was not found in {shown}"
    tokens = old.split()
    if tokens:
        loose = re.compile(r"\s+".join(re.escape(t) for t in tokens))
        hits = [m.start() for m in loose.finditer(text)]
        if hits:
            where = ", ".join(str(_line_of(text, h)) for h in hits[:5])
            message += (
                f"; text matching it up to whitespace is at line(s) {where} — copy the exact "
                "whitespace and indentation from read_file"
            )
            return message
    if _LINE_NUMBER_PREFIX.search(old):
        return message + "; old seems to include line numbers from read_file — leave them out"
    return message + "; read the file again and copy old exactly"


def _edit_summary(shown: str, updated: str, start: int, old: str, new: str) -> str:
    first = _line_of(updated, start)
    new_lines = max(_count_lines(new), 1)
    last = first + new_lines - 1
    old_lines = max(_count_lines(old), 1)
    head = (
        f"edited {shown}: replaced {old_lines} line(s) at line {first} with {new_lines} line(s); "
        f"changed range now lines {first}–{last}"
    )
    lines = updated.splitlines()
    snippet_end = min(last, first + EDIT_SNIPPET_LINES - 1, len(lines))
    snippet = [_numbered(n, lines[n - 1]) for n in range(first, snippet_end + 1)]
    if snippet_end < last:
        snippet.append(f"[… {last - snippet_end} more changed lines]")
    return head + ("\n" + "\n".join(snippet) if snippet else "")


# ── list_dir ────────────────────────────────────────────────────────────────────────────────


class ListDirInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = "."


class ListDir(Tool):
    name = "list_dir"
    description = "List one directory (not recursive); folders end in '/'."
    input_model = ListDirInput
    repeat = "per_target"
    read_only = True

    async def execute(self, args: ListDirInput, ctx: RunContext) -> ToolResult:
        return await asyncio.to_thread(self._list, ctx, args.path)

    def _list(self, ctx: RunContext, path: str) -> ToolResult:
        target = resolve_in_root(ctx.cwd, path, root_resolved=True)
        shown = display_path(ctx.cwd, target, root_resolved=True)
        if not target.exists():
            raise ToolError(f"no such directory: {shown}; list its parent to see what exists")
        if not target.is_dir():
            raise ToolError(f"{shown} is a file, not a directory; use read_file to read it")
        try:
            entries = sorted(target.iterdir(), key=lambda p: p.name)
        except OSError as exc:
            raise ToolError(f"cannot list {shown}: {exc.strerror or exc}") from None
        rows = [_describe_entry(p) for p in entries[:LIST_DIR_CAP]]
        header = f"{shown}/ ({counted(len(entries), 'entry', 'entries')})"
        if not entries:
            return ToolResult(f"{header}\n[empty directory]")
        if len(entries) > LIST_DIR_CAP:
            rows.append(f"[… {len(entries) - LIST_DIR_CAP} more entries omitted]")
        return ToolResult(header + "\n" + "\n".join(rows))


def _describe_entry(entry: Path) -> str:
    """One row, from the entry's `lstat` alone: a FIFO or a device is named, never opened."""
    name = shown_name(entry.name)  # one row, whatever the name holds
    try:
        info = entry.lstat()
        mode = info.st_mode
        if stat.S_ISLNK(mode):
            return f"{name} -> {shown_name(str(entry.readlink()))}"
        if stat.S_ISDIR(mode):
            return f"{name}/ (contents not listed)" if entry.name in OPAQUE_DIRS else f"{name}/"
        special = kind(mode)
        if special is not None:
            return f"{name}  ({special.removeprefix('a ')}, not a regular file)"
        return f"{name}  {_human_size(info.st_size)}"
    except OSError:
        return f"{name}  (unreadable)"


def _human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover

"""What the offline model knows about the working tree: only what its own tool results in the history
say. Pure functions over `list_dir` and `read_file` results; nothing here touches the disk.

Existence is decided from directory listings, walking down a target's path one folder at a time, so
a run knows which files were there before it wrote anything (and a resumed run knows the same, from
the same history). Doubt is never "absent": a cut listing, an unreadable folder, a path that leaves
the working directory or enters arreio's own state is `unknown`, and an unknown target is not written.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

State = Literal["new", "exists", "unknown"]

_HEADER = re.compile(r"^.*/ \((\d+) entr(?:y|ies)\)$")
_OMITTED = re.compile(r"^\[… \d+ more entries omitted\]$")
_NUMBERED = re.compile(r" *(\d+)\t(.*)", re.DOTALL)
_LINE_CUT = re.compile(r" \[… line cut, \d+ chars in all\]$")
_EMPTY = re.compile(r"^\[.+ is empty\]$")
_EXACT_SIZE = re.compile(r"^(\d+) B$")


@dataclass(frozen=True)
class Listing:
    """One `list_dir` result: its rows, whether it showed every entry, or why it failed."""

    rows: tuple[str, ...] = ()
    complete: bool = True
    failure: Literal["", "missing", "not_a_dir", "error"] = ""


def parse_listing(content: str, is_error: bool) -> Listing:
    if is_error:
        content = content.removeprefix("list_dir: ")  # the tool chain names the tool in its errors
        if content.startswith("no such directory"):
            return Listing(failure="missing")
        return Listing(failure="not_a_dir" if "is a file" in content else "error")
    lines = content.splitlines()
    if not lines or not _HEADER.match(lines[0]):
        return Listing(failure="error")
    rows = [ln for ln in lines[1:] if ln != "[empty directory]"]
    complete = not any(_OMITTED.match(ln) for ln in rows)
    return Listing(rows=tuple(ln for ln in rows if not _OMITTED.match(ln)), complete=complete)


def _key(name: str) -> str:
    # Case and Unicode form are folded: on macOS and Windows `Notes.md` *is* `notes.md`, and a
    # mistaken "exists" only costs a write the run declines, never a file the user had.
    return unicodedata.normalize("NFC", name).casefold()


def entry(listing: Listing, name: str) -> tuple[str, str] | None:
    """(kind, row) of `name` in the listing — kind: dir | file | link | opaque — or None."""
    want = _key(name)
    for row in listing.rows:
        key = _key(row)
        if key == want + "/":
            return "dir", row
        if key.startswith(want + "/ ("):
            return "opaque", row  # .git/, .arreio/: never looked into, never written
        if key.startswith(want + " -> "):
            return "link", row
        if key.startswith(want + "  "):
            return "file", row
    return None


def parts_of(path: str) -> tuple[str, ...] | None:
    """A target's folders and name, or None when it is not a plain relative path inside the tree."""
    if not path or path.startswith(("/", "~")) or "\\" in path or re.match(r"^[A-Za-z]:", path):
        return None
    parts = tuple(p for p in PurePosixPath(path).parts if p != ".")
    if not parts or ".." in parts:
        return None
    return parts


def folder(parts: tuple[str, ...]) -> str:
    return "/".join(parts) or "."


def state_of(path: str, listings: dict[str, Listing]) -> State | str:
    """`new`, `exists`, `unknown`, or the folder that must be listed next to tell (a str)."""
    parts = parts_of(path)
    if parts is None:
        return "unknown"
    for depth, name in enumerate(parts):
        where = folder(parts[:depth])
        listing = listings.get(where)
        if listing is None:
            return where
        if listing.failure == "missing":
            return "new"  # its folder does not exist, so neither does it
        if listing.failure:
            return "unknown"
        found = entry(listing, name)
        if found is None:
            return "new" if listing.complete else "unknown"
        if depth == len(parts) - 1:
            return "exists"
        if found[0] in ("file", "opaque"):
            return "unknown"  # a file where a folder should be, or arreio's own state
    return "unknown"  # pragma: no cover - the loop always returns


def exact_size(path: str, listings: dict[str, Listing]) -> int | None:
    """The file's size in bytes when its listing shows it exactly (under 1 KB), else None."""
    parts = parts_of(path)
    listing = listings.get(folder(parts[:-1])) if parts else None
    found = entry(listing, parts[-1]) if listing and parts else None
    if not found or found[0] != "file":
        return None
    size = _EXACT_SIZE.match(found[1][len(parts[-1]) :].strip())
    return int(size.group(1)) if size else None


@dataclass(frozen=True)
class Text:
    """A file's text exactly as `read_file` showed all of it: `lines` joined by newlines, and
    whether the file was empty (no lines at all, as opposed to one empty line)."""

    body: str
    empty: bool


def exact_text(content: str) -> Text | None:
    """The whole text of a `read_file` result, or None when the result is not all of the file verbatim
    (a page of it, a cut line, a note about its encoding): then it cannot be extended safely."""
    if _EMPTY.match(content.strip()):
        return Text("", True)
    lines = []
    for number, line in enumerate(content.split("\n"), start=1):
        shown = _NUMBERED.fullmatch(line)
        if shown is None or int(shown.group(1)) != number or _LINE_CUT.search(shown.group(2)):
            return None
        lines.append(shown.group(2))
    return Text("\n".join(lines), False)


def strip_numbers(content: str) -> str:
    """A `read_file` result as plain text, for describing it (not for rewriting it)."""
    body = re.sub(r"\n?\[showing lines [^\]]*\]\s*$", "", content)
    body = _ENCODING_NOTE.sub("", body)  # the tool's own first line, not the file's (encoding.Encoding.note)
    return re.sub(r"^\s*\d+\t", "", body, flags=re.MULTILINE)


_ENCODING_NOTE = re.compile(r"\A\[[^\n]* is not UTF-8: [^\n]*; decoded as [^\n]*\]\n")

"""Finding and reading the files a user asks to index.

`expand` turns the PATH arguments of `kb add` (files, folders, globs) into files, skipping what a
person would not mean (hidden folders such as `.git` and `.arreio`, virtualenvs, caches). `read_text`
decides whether a file is text the way the file tools do (`engine/tools/encoding.py`): UTF-8 (a BOM is
dropped), a byte-order-marked UTF-16/32, a declared encoding, or cp1252/latin-1 text is indexed; a NUL
byte without a BOM means binary, skipped with a notice, never an error.
"""

from __future__ import annotations

import errno
import glob
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from arreio.engine.core.regular_file import NotRegularFile, open_regular
from arreio.engine.tools.encoding import SNIFF_BYTES, sniff

SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", ".venv", "site-packages", "dist", "build"})
MAX_FILE_BYTES = 10 * 1024 * 1024  # bigger "text" is a log or a dump, not knowledge


@dataclass(frozen=True)
class SourceText:
    path: Path
    text: str
    sha256: str
    size: int


def _walk(folder: Path, notices: list[str]) -> list[Path]:
    """The regular files under `folder` (a link to one inside `folder` counts). A FIFO, socket or
    device is passed over: opening a FIFO waits for a writer forever. A link that loops or leads
    nowhere is named; so is a link to a file outside `folder`, which is not followed (as a link to a
    folder is not): a cloned repository's `docs/keys.md -> ~/.aws/credentials` would have put the
    user's keys in the index, where `kb_search` gives the model what `read_file` refuses."""
    found = []
    inside = folder.resolve()
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = Path(root) / name
            try:
                if not stat.S_ISREG(path.stat().st_mode):
                    continue
                if path.is_symlink() and not path.resolve().is_relative_to(inside):
                    notices.append(
                        f"{_shown(path)}: skipped, a link to a file outside {_shown(folder)} "
                        "(name the file itself to index it)"
                    )
                    continue
                found.append(path)
            except (OSError, RuntimeError) as error:
                notices.append(f"{_shown(path)}: skipped, {_unreachable(error)}")
    return found


def _unreachable(error: OSError | RuntimeError) -> str:
    """Why a path could not be followed (`Path.resolve` says RuntimeError for a loop)."""
    if isinstance(error, RuntimeError) or error.errno == errno.ELOOP:
        return "a symlink loop"
    return f"cannot read ({error.strerror or error})"


def expand(arguments: list[str], cwd: Path) -> tuple[list[Path], list[str]]:
    """Files named by the arguments (resolved, deduplicated, in order) and notices about arguments
    that matched nothing and files that are skipped (not a regular file, a symlink loop, a name the
    index cannot keep). When none of the files can be indexed (all binary, too large, unreadable),
    the list is empty and the notices say why of each: a caller stops before it makes a database."""
    files: dict[Path, None] = {}
    unnamed: set[Path] = set()
    notices: list[str] = []
    for argument in arguments:
        candidate = Path(argument).expanduser()
        if not candidate.is_absolute():
            candidate = cwd / candidate
        if candidate.exists():
            matches = [candidate]
        elif glob.has_magic(argument):
            matches = [Path(m) for m in sorted(glob.glob(str(candidate), recursive=True))]
        else:
            matches = []
        if not matches:
            notices.append(f"{argument}: no such file or folder")
        for match in matches:
            shown = argument if match == candidate else _shown(match)
            for file in _walk(match, notices) if match.is_dir() else _named(match, shown, notices):
                try:
                    file = file.resolve(strict=True)
                except (OSError, RuntimeError) as error:  # replaced since it was looked at
                    notices.append(f"{_shown(file)}: skipped, {_unreachable(error)}")
                    continue
                if _text_name(file):
                    files.setdefault(file, None)
                elif file not in unnamed:
                    unnamed.add(file)
                    notices.append(f"{_shown(file)}: skipped, its name is not UTF-8 (the index keeps names as text)")
    return _unless_none_indexable(list(files), notices)


def _named(path: Path, shown: str, notices: list[str]) -> list[Path]:
    """`[path]` for a file named on its own when it is a regular file; else a notice and `[]`."""
    try:
        mode = path.stat().st_mode
    except OSError as error:
        notices.append(f"{shown}: skipped, {_unreachable(error)}")
        return []
    if stat.S_ISREG(mode):
        return [path]
    notices.append(f"{shown}: skipped, not a regular file")
    return []


def _unless_none_indexable(files: list[Path], notices: list[str]) -> tuple[list[Path], list[str]]:
    """`(files, notices)`, or `([], notices + why each is skipped)` when `read_text` would index none
    of them. Looks only as far as the first indexable file (its first bytes): usually one open."""
    reasons = []
    for file in files:
        reason = _skip_reason(file)
        if reason is None:
            return files, notices
        reasons.append(reason)
    return [], notices + reasons


def _text_name(path: Path) -> bool:
    """A name the index can store: on Linux a file name may be any bytes, which Python keeps as
    lone surrogates that neither SQLite nor JSON can hold."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(path: Path) -> str:
    """The path with its bytes that are not UTF-8 written out (`\\xff`), printable anywhere."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _open(path: Path) -> tuple[BinaryIO, int] | str:
    """The open file and its size, or a one-line reason why it is not indexed. Only a regular
    file is opened, never one that would block (`engine/core/regular_file.py`)."""
    try:
        fd, info = open_regular(path)
    except NotRegularFile:
        return f"{path}: skipped, not a regular file"
    except OSError as error:
        return f"{path}: skipped, cannot read ({error.strerror or error})"
    if info.st_size > MAX_FILE_BYTES:
        os.close(fd)
        return f"{path}: skipped, larger than {MAX_FILE_BYTES // (1024 * 1024)} MB"
    return open(fd, "rb"), info.st_size


def _skip_reason(path: Path) -> str | None:
    """Why `read_text` would not index `path` (from its first bytes), or None when it would."""
    opened = _open(path)
    if isinstance(opened, str):
        return opened
    try:
        with opened[0] as fh:
            return f"{path}: skipped, binary file" if sniff(fh.read(SNIFF_BYTES)) is None else None
    except OSError as error:
        return f"{path}: skipped, cannot read ({error.strerror or error})"


def read_text(path: Path) -> SourceText | str:
    """The file's text and content hash, or a one-line reason why it is not indexed."""
    opened = _open(path)
    if isinstance(opened, str):
        return opened
    try:
        with opened[0] as fh:
            data = fh.read()
    except OSError as error:
        return f"{path}: skipped, cannot read ({error.strerror or error})"
    encoding = sniff(data[:SNIFF_BYTES])
    if encoding is None:
        return f"{path}: skipped, binary file"
    try:  # text in another encoding (cp1252, latin-1, a declared one) is indexed, not skipped
        text = data.decode(encoding.name)
    except UnicodeDecodeError:
        text = data.decode(encoding.name, errors="replace")  # bad bytes past the sniffed head
    return SourceText(path, text, hashlib.sha256(data).hexdigest(), len(data))

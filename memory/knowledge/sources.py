"""Finding and reading the files a user asks to index.

`expand` turns the PATH arguments of `kb add` (files, folders, globs) into files, skipping what a
person would not mean (hidden folders such as `.git` and `.arreio`, virtualenvs, caches). `read_text`
decides whether a file is text the way the file tools do (`engine/tools/encoding.py`): UTF-8 (a BOM is
dropped), a byte-order-marked UTF-16/32, a declared encoding, or cp1252/latin-1 text is indexed; a NUL
byte without a BOM means binary, skipped with a notice, never an error.
"""

from __future__ import annotations

import glob
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from arreio.engine.tools.encoding import SNIFF_BYTES, sniff

SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", ".venv", "site-packages", "dist", "build"})
MAX_FILE_BYTES = 10 * 1024 * 1024  # bigger "text" is a log or a dump, not knowledge


@dataclass(frozen=True)
class SourceText:
    path: Path
    text: str
    sha256: str
    size: int


def _walk(folder: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        found.extend(Path(root) / name for name in sorted(files) if not name.startswith("."))
    return found


def expand(arguments: list[str], cwd: Path) -> tuple[list[Path], list[str]]:
    """Files named by the arguments (resolved, deduplicated, in order) and notices about
    arguments that matched nothing and files whose names the index cannot keep."""
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
            for file in _walk(match) if match.is_dir() else [match] if match.is_file() else []:
                file = file.resolve()
                if _text_name(file):
                    files.setdefault(file, None)
                elif file not in unnamed:
                    unnamed.add(file)
                    notices.append(f"{_shown(file)}: skipped, its name is not UTF-8 (the index keeps names as text)")
    return list(files), notices


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


def read_text(path: Path) -> SourceText | str:
    """The file's text and content hash, or a one-line reason why it is not indexed."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return f"{path}: skipped, larger than {MAX_FILE_BYTES // (1024 * 1024)} MB"
        data = path.read_bytes()
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

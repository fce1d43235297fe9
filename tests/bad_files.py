"""Files that must not hang arreio, exhaust its memory or crash it when it reads them: a FIFO nobody
writes to, /dev/zero, /dev/urandom, a 2 GB sparse file, billion-laughs YAML and 50,000-deep YAML
and JSON. `make` puts one at a path (a device as a symlink to it); `assert_refused` checks how a
real `arreio` process ended on one."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SPECIAL = ("fifo", "zero", "sparse")  # no regular file of a sane size (also "urandom", as zero is)
JSON_KINDS = (*SPECIAL, "deep-json")  # for a file read as JSON (or JSON Lines)
YAML_KINDS = (*JSON_KINDS, "laughs", "deep-yaml")  # for a file read as YAML
DEEP = 50_000


# What a refusal says of each kind (the file's own name comes before it).
REASON = {
    "fifo": "a named pipe, not a regular file",
    "zero": "a character device, not a regular file",
    "urandom": "a character device, not a regular file",
    "sparse": "2 GB, over the",
    "laughs": "nodes (aliases expanded)",
    "deep-yaml": "nested deeper than 100 levels",
    "deep-json": "nested deeper than 100 levels",
}


def laughs() -> str:
    """Billion laughs: nine levels of nine aliases, 9**9 (387 million) nodes from 700 bytes."""
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for before, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{before}'] * 9)}]")
    return "\n".join(lines) + "\n"


def deep_flow() -> str:
    """50,000 levels of YAML flow sequences (or JSON arrays), on one line."""
    return "[" * DEEP + "]" * DEEP


def deep_yaml() -> str:
    return "a: " + deep_flow() + "\n"


def deep_json() -> str:
    return '{"a": ' + "[" * DEEP + "]" * DEEP + "}\n"


def make(path: Path, kind: str) -> Path:
    """A file of `kind` at `path` (folders made); returns `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind in ("zero", "urandom"):
        os.symlink(f"/dev/{kind}", path)
    elif kind == "sparse":
        with open(path, "wb") as handle:
            handle.truncate(2 * 1024**3)
    else:
        path.write_text({"laughs": laughs, "deep-yaml": deep_yaml, "deep-json": deep_json}[kind](), encoding="utf-8")
    return path


def assert_refused(result: subprocess.CompletedProcess, code: int = 2, *, says: str = "") -> None:
    """The process ended with `code` and said why in one line on stderr: no traceback, no internal error."""
    assert result.returncode == code, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert says in lines[0], lines[0]

"""The ignore rules a run's checkpoints keep to: the `.gitignore` files as they were when the run began.

A snapshot leaves out what `.gitignore` ignores (build output, `node_modules/`). Read from the tree as
it is now, that would let a run hide its own files — `printf 'backdoor.sh\n' >> .gitignore` and the
file is in no checkpoint, so `arreio undo` neither lists nor removes it — or show a user's ignored
file (`.env`) as one the run created, which undo would then delete. So once a run changes a
`.gitignore`, its snapshots read the rules its first checkpoint holds instead (`store.py`). A change
is seen in a `.gitignore` the snapshot holds or would hold; a new one that ignores itself and its
whole folder (as `.venv/`, `.pytest_cache/` and other tools' folders have) is not, so such a folder
stays out of checkpoints, as before.

Git reads `.gitignore` files only from the working tree, so those rules are handed to it as one
exclude file (`anchored`): each folder's patterns anchored to that folder, shallow folders first, so
a deeper file's rules come later and win, as they do in git.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

NAME = ".gitignore"


def escaped(text: str) -> str:
    """A literal path as a gitignore pattern."""
    return re.sub(r"([\\*?\[\]!# ])", r"\\\1", text)


def anchored(files: Mapping[str, bytes]) -> bytes:
    """One exclude file holding the rules of every `.gitignore` in `files` (its folder, "" for the
    top, → its content), each pattern meaning what it meant in its own folder."""
    out: list[bytes] = []
    for folder in sorted(files, key=lambda f: (f.count("/") + bool(f), f)):
        base = escaped(folder).encode("utf-8", "surrogateescape")
        for line in files[folder].split(b"\n"):
            rule = _anchored_line(line, base)
            if rule:
                out.append(rule)
    return b"".join(rule + b"\n" for rule in out)


def _anchored_line(line: bytes, base: bytes) -> bytes:
    line = _trailing_spaces_dropped(line)
    if not line or line.startswith(b"#"):
        return b""
    if not base:
        return line  # the top folder's own patterns mean the same in an exclude file
    negated = line.startswith(b"!")
    body = line[1:] if negated else line
    folder_only = body.endswith(b"/") and not body.endswith(b"\\/")
    core = body[:-1] if folder_only else body
    if not core:
        return b""
    if b"/" in core:  # a slash at the start or in the middle: relative to its .gitignore's folder
        rule = b"/" + base + b"/" + core.lstrip(b"/")
    else:  # a bare name: at any depth below that folder
        rule = b"/" + base + b"/**/" + core
    return (b"!" if negated else b"") + rule + (b"/" if folder_only else b"")


def _trailing_spaces_dropped(line: bytes) -> bytes:
    """Trailing spaces are not part of a pattern unless a backslash quotes the last one (as git reads them)."""
    end = len(line)
    while end and line[end - 1 : end] == b" " and line[end - 2 : end - 1] != b"\\":
        end -= 1
    return line[:end]


def files_in_tree(run_git: Callable[..., bytes], tree: str) -> dict[str, bytes]:
    """The `.gitignore` files a snapshot `tree` holds: their folder ("" for the top) → content."""
    found: dict[str, str] = {}
    for item in run_git("ls-tree", "-r", "-z", tree).split(b"\0"):
        meta, _, path = item.partition(b"\t")
        parts = meta.split()
        if (
            len(parts) == 3
            and parts[1] == b"blob"
            and parts[0] != b"120000"
            and path.rsplit(b"/", 1)[-1] == NAME.encode()
        ):
            found[os.fsdecode(path.rpartition(b"/")[0])] = parts[2].decode()
    if not found:
        return {}
    out = run_git("cat-file", "--batch", stdin="".join(f"{sha}\n" for sha in found.values()).encode())
    contents: list[bytes] = []
    while out:
        header, _, out = out.partition(b"\n")
        size = int(header.split()[2])
        contents.append(out[:size])
        out = out[size + 1 :]
    return dict(zip(found, contents, strict=True))

"""What snapshot trees hold and how two of them differ, file by file (read from the shadow repository)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One file as a tree holds it: git mode ("100644", "100755", "120000") and blob id."""

    mode: str
    blob: str


@dataclass(frozen=True)
class Delta:
    """A path that differs between two trees (`before`/`after` None: absent there)."""

    path: str
    before: Entry | None
    after: Entry | None


class TreeReading:
    """The reading half of `ShadowRepo`: it runs git in the shadow repository (`run_git`)."""

    def run_git(self, *args: str, stdin: bytes | None = None) -> bytes:
        raise NotImplementedError

    def diff(self, before: str, after: str, paths: Sequence[str] = ()) -> list[Delta]:
        """What differs between two trees, file by file (no rename detection: a move is delete + create)."""
        if before == after:
            return []
        args = ["diff-tree", "-r", "-z", "--no-renames", before, after]
        out = self.run_git(*args, *(["--", *paths] if paths else []))
        fields = out.split(b"\0")
        deltas = []
        for i in range(0, len(fields) - 1, 2):
            meta, path = fields[i].decode(), os.fsdecode(fields[i + 1])
            if not meta.startswith(":"):
                continue
            old_mode, new_mode, old_sha, new_sha, _status = meta[1:].split(" ")
            deltas.append(
                Delta(
                    path,
                    None if old_mode == "000000" else Entry(old_mode, old_sha),
                    None if new_mode == "000000" else Entry(new_mode, new_sha),
                )
            )
        return deltas

    def commit_message(self, commit: str) -> bytes:
        """A checkpoint commit's message (what follows its headers)."""
        return self.run_git("cat-file", "commit", commit).partition(b"\n\n")[2]

    def holds(self, tree: str, path: str) -> bool:
        """Whether `tree` holds a file at `path`."""
        return bool(self.run_git("ls-tree", "--name-only", tree, "--", path).strip())

    def patch(self, before: str, after: str, *, stat_only: bool = False, paths: Sequence[str] = ()) -> str:
        """A unified diff (or `--stat`) from one tree to another, as git prints it."""
        what = ["--stat=100"] if stat_only else ["-p", "--no-textconv"]
        out = self.run_git(
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-renames",
            *what,
            before,
            after,
            *(["--", *paths] if paths else []),
        )
        return out.decode("utf-8", errors="replace")

    def numstat(self, before: str, after: str) -> dict[str, tuple[int | None, int | None]]:
        """Lines added and removed per path (None, None for a binary file)."""
        out = self.run_git("diff", "--numstat", "-z", "--no-renames", before, after).split(b"\0")
        result = {}
        for item in out:
            parts = item.split(b"\t", 2)
            if len(parts) == 3:
                added, removed = (None if p == b"-" else int(p) for p in parts[:2])
                result[os.fsdecode(parts[2])] = (added, removed)
        return result

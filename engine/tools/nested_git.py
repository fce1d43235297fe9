"""The `.git` of every repository nested below the working directory, for the shell's sandbox.

The file tools refuse a `.git` component anywhere below the working directory (governance/protected.py),
but the sandbox mounted only `<cwd>/.git` read-only, so `git -C vendor/lib config core.fsmonitor …`
from `shell` planted a command the user's next `git status` there would run, and `rm -rf
vendor/lib/.git` took that repository's history. Finding them means walking the tree:
done once per run (`nested_git_dirs`, cached by run id) — a repository the agent makes during the
run is its own — not descending into other repositories' `.git`, into links, or into folders that
hold installed packages and caches rather than checkouts; bounded by MAX_ENTRIES so a huge tree costs
a bounded walk.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

_SKIP = frozenset(
    {
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        "site-packages",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cache",
    }
)
MAX_ENTRIES = 200_000  # directory entries looked at, at most (a 200k-entry tree walks in ~0.3 s)


def find_nested_git(cwd: Path, max_entries: int = MAX_ENTRIES) -> list[Path]:
    """Every `.git` (folder or file) below `cwd` but `cwd/.git` itself, in walk order."""
    found: list[Path] = []
    seen = 0
    stack = [str(cwd)]
    while stack and seen < max_entries:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                children = []
                for entry in entries:
                    seen += 1
                    if entry.name == ".git":
                        if folder != str(cwd):
                            found.append(Path(entry.path))
                        continue
                    if entry.name in _SKIP:
                        continue
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            children.append(entry.path)
                    except OSError:
                        continue
        except OSError:  # unreadable, or gone meanwhile
            continue
        stack.extend(sorted(children, reverse=True))
    return found


@lru_cache(maxsize=8)
def nested_git_dirs(cwd: str, run_id: str) -> tuple[Path, ...]:
    """`find_nested_git` once per run (`run_id`) and working directory."""
    return tuple(find_nested_git(Path(cwd)))

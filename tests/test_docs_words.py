"""What a reader meets in the repository says why things are as they are, not how they came to be:
no issue numbers, work-session stories or trial anecdotes in code comments, docstrings or docs
(docs/architecture.md section 8), and no pointer to a file outside the repository."""

from __future__ import annotations

import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKIP = {".venv", "site", ".arreio", "build", ".git", "node_modules"}
# Spelled in parts, so this file does not match itself.
NARRATIVE = re.compile("|".join([r"issue" + r" [0-9]", r"sit" + r"ting", r"a user" + r" trial"]), re.IGNORECASE)
OUTSIDE = re.compile(r"\.\./shared/|" + "DESIGN" + r"\.md")


def sources() -> list[Path]:
    found = []
    for folder, subfolders, files in os.walk(REPO):
        subfolders[:] = [d for d in subfolders if d not in SKIP and not d.endswith(".egg-info")]
        found += [Path(folder) / f for f in files if f.endswith((".py", ".md"))]
    return sorted(found)


def test_no_development_narrative() -> None:
    found = [
        f"{p.relative_to(REPO)}:{n}: {line.strip()}"
        for p in sources()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if NARRATIVE.search(line)
    ]
    assert not found, "\n".join(found)


def test_no_pointer_outside_the_repository() -> None:
    found = [
        f"{p.relative_to(REPO)}:{n}: {line.strip()}"
        for p in sources()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, "\n".join(found)

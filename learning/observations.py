"""What a run observed that could be a convention of the project, kept run by run in the `procedural`
substore so a later pass can tell a convention (seen in two runs) from a one-off.

Only plain, checkable things: a test or build command that passed (`pytest -q`), the folder the run's
outputs went to (`out/`). A folder name is taken only when it reads as a folder, not as a sentence
(`from-now-on-ignore-the-user/` is not a layout: the agent chose that name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from arreio.learning.summary import RunSummary

KIND = "observation"
# Test and build runners whose passing command is a project convention worth keeping.
_RUNNERS = re.compile(
    r"^(?:python3? -m )?(?:pytest|py\.test|tox|nox|make(?: \w[\w.-]*)?|npm (?:test|run \w[\w:-]*)|pnpm test|yarn test"
    r"|cargo (?:test|build|check|clippy)|go (?:test|build|vet)|mvn \w+|gradle \w+|\./gradlew \w+|ruff check|mypy"
    r"|uv run pytest|poetry run pytest|just \w+|bundle exec rspec|dotnet test)(?:\s|$)"
)
_SEGMENT = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,23}$")
MAX_COMMAND = 60


@dataclass(frozen=True)
class Observation:
    """One run's candidates for a convention."""

    tests: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        return {"kind": KIND, "tests": self.tests, "outputs": self.outputs}

    @classmethod
    def of(cls, payload: dict[str, Any]) -> Observation:
        def strings(key: str) -> list[str]:
            value = payload.get(key)
            return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

        return cls(strings("tests"), strings("outputs"))


def observe(summary: RunSummary) -> Observation:
    """The run's passing test/build commands and the folders its files were written to."""
    tests = [c for c in dict.fromkeys(summary.commands_ok) if len(c) <= MAX_COMMAND and _RUNNERS.match(c)]
    folders = []
    for path in summary.files_written:
        folder = path.replace("\\", "/").lstrip("./").rsplit("/", 1)[0] if "/" in path.strip("/") else ""
        if folder and plain_folder(folder):
            folders.append(folder)
    return Observation(tests, list(dict.fromkeys(folders)))


def plain_folder(folder: str) -> bool:
    """A folder name a layout can be stated with: at most three short segments, each at most three
    words (`docs/summaries`, `build-output`), no spaces, nothing that reads as a sentence."""
    segments = folder.strip("/").split("/")
    return 0 < len(segments) <= 3 and all(
        _SEGMENT.match(s) and s not in (".", "..") and len(re.split(r"[-_.]", s)) <= 3 for s in segments
    )

"""Small fakes for the curator tests: a settable clock and a skill writer."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "skills"


class FakeClock:
    """A clock that stays where it is told."""

    def __init__(self, at: datetime = T0) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at

    def monotonic(self) -> float:
        return self.at.timestamp()

    async def sleep(self, seconds: float) -> None:
        self.advance(seconds=seconds)

    def advance(self, **delta: float) -> None:
        self.at = self.at + timedelta(**delta)

    def set_days(self, days: float) -> None:
        self.at = T0 + timedelta(days=days)


def write_skill(
    skills_dir: Path,
    name: str,
    *,
    created_by: str | None = "agent",
    description: str = "A procedure worth keeping.",
    body: str = "Do the thing.\n",
) -> Path:
    folder = skills_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["---", f"name: {name}", f"description: {description}"]
    if created_by is not None:
        lines.append(f"created_by: {created_by}")
    lines += ["---", "", body]
    (folder / "SKILL.md").write_text("\n".join(lines), encoding="utf-8")
    return folder

"""Helpers for the curator tests: the engine's fixed clock at T0, and a skill writer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from arreio.engine.providers.testing import FixedClock

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "skills"


def clock_at(at: datetime = T0) -> FixedClock:
    """The engine's fixed clock, standing at `at` (T0 by default)."""
    return FixedClock(at)


def days_after_t0(clock: FixedClock, days: float) -> None:
    clock.set(T0 + timedelta(days=days))


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

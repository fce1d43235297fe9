"""How a unit or a run ended, and the one table from verdict to exit code (docs/architecture.md section 9)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arreio.engine.core import events as ev

EXIT_CODES: dict[str, int] = {"success": 0, "failed": 1, "paused": 3, "partial": 4, "cancelled": 130}
AUTH_EXIT = 5  # a failure because the provider refused the credentials is a configuration error


def exit_code(verdict: ev.Verdict, *, auth: bool = False) -> int:
    """The process exit code for a verdict (a failed run whose credentials were refused: 5)."""
    return AUTH_EXIT if auth and verdict == "failed" else EXIT_CODES[verdict]


@dataclass(frozen=True)
class Outcome:
    """A unit's or a run's end: the verdict, its exit code, why (for anything but success) and the
    model's last answer — with an output schema, also the valid JSON value it is (`final_json`)."""

    verdict: ev.Verdict
    exit_code: int
    message: str = ""
    final_text: str = ""
    final_json: Any = None

    @classmethod
    def of(
        cls, verdict: ev.Verdict, message: str = "", final_text: str = "", *, auth: bool = False, final_json: Any = None
    ) -> Outcome:
        return cls(verdict, exit_code(verdict, auth=auth), message, final_text, final_json)

    @classmethod
    def from_unit_end(cls, end: ev.UnitEnd) -> Outcome:
        return cls(end.verdict, end.exit_code, end.message, end.final_text, end.final_json)

    def unit_end(self, unit_id: str, steps: int) -> ev.UnitEnd:
        return ev.UnitEnd(
            unit_id=unit_id,
            verdict=self.verdict,
            exit_code=self.exit_code,
            message=self.message,
            final_text=self.final_text,
            steps=steps,
            final_json=self.final_json,
        )


CANCELLED = Outcome.of("cancelled", "cancelled")

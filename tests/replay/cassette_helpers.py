"""Helpers for the record/replay tests: a parsed CLI result and event normalisation."""

from __future__ import annotations

import json

VOLATILE = {
    "run_id",
    "session_id",
    "report_path",
    "cwd",
    "events_path",
    "cost_usd",
    "free",
    "free_because",  # a replay costs nothing, by design: compared apart
    "delay_s",
}  # backoff jitter is random, so processes do not retry in lockstep


class Result:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr

    @property
    def events(self) -> list[dict]:
        """The JSON Lines events of a `run --json` (only meaningful for those)."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.startswith('{"type"')]

    @property
    def done(self) -> dict:
        return self.events[-1]

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e["type"] == kind]


def normalised(events: list[dict]) -> list[dict]:
    """Events without what differs between any two runs (ids, paths); replay warnings dropped."""
    return [
        {k: v for k, v in e.items() if k not in VOLATILE}
        for e in events
        if not (e["type"] == "warning" and e.get("code") == "replay")
    ]

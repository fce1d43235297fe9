"""Identifiers and timestamps: sortable ids readable in a file listing (`20261130-091500-3f9a1c`),
ISO-8601 UTC text in and out."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from arreio.engine.core.errors import UsageError


def new_id(now: datetime, prefix: str = "") -> str:
    """A time-sortable id: UTC timestamp to the second plus 24 random bits."""
    stamp = now.strftime("%Y%m%d-%H%M%S")
    return f"{prefix}{stamp}-{secrets.token_hex(3)}"


def iso_ms(now: datetime) -> str:
    """ISO-8601 UTC with milliseconds and a `Z` (`2026-06-27T16:00:00.000Z`)."""
    # Formatted by hand: strftime costs several times as much, and this runs a few times a turn.
    return (
        f"{now.year:04d}-{now.month:02d}-{now.day:02d}T{now.hour:02d}:{now.minute:02d}:{now.second:02d}."
        f"{now.microsecond // 1000:03d}Z"
    )


def parse_utc(value: str, *, what: str = "time") -> datetime:
    """ISO-8601 text as an aware UTC datetime (a naive value is taken as UTC); a `UsageError` naming
    `what` (e.g. "--since") otherwise."""

    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(
            f"{what} {value!r} is not an ISO-8601 time (e.g. 2026-06-27T16:00:00Z or 2026-06-27)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)

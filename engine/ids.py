"""Identifiers: sortable, unique, readable in a file listing (`20261130-091500-3f9a1c`)."""

from __future__ import annotations

import secrets
from datetime import datetime


def new_id(now: datetime, prefix: str = "") -> str:
    """A time-sortable id: UTC timestamp to the second plus 24 random bits."""
    stamp = now.strftime("%Y%m%d-%H%M%S")
    return f"{prefix}{stamp}-{secrets.token_hex(3)}"


def iso_ms(now: datetime) -> str:
    """ISO-8601 UTC with milliseconds and a `Z` (`2026-06-27T16:00:00.000Z`)."""
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"

"""Durations on the command line: `--older-than 30d` read, and an age spelled back in words."""

from __future__ import annotations

_UNITS = {
    "s": "seconds",
    "sec": "seconds",
    "second": "seconds",
    "min": "minutes",
    "minute": "minutes",
    "h": "hours",
    "hour": "hours",
    "d": "days",
    "day": "days",
    "w": "weeks",
    "week": "weeks",
}


def duration(text: str):
    """`30d`, `12h`, `90min`, `2 weeks`. A bare `m` is refused: it reads as minutes to some and as
    months to others (`--older-than 1m` meant a month and pruned everything older than a minute)."""
    import re
    from datetime import timedelta

    from arreio.engine.core.errors import UsageError

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", text.lower())
    word = match.group(2) if match else ""
    unit = _UNITS.get(word.removesuffix("s") if len(word) > 3 else word) if match else None
    if match and word in ("m", "mo", "mon", "month", "months"):
        raise UsageError(
            f"--older-than {text!r}: m could be minutes or months; write minutes as min (90min), "
            "and months as days (30d)"
        )
    if unit is None and not (match and word == ""):
        raise UsageError(f"--older-than {text!r}: give a number with s, min, h, d or w (e.g. 30d, 12h, 90min)")
    return timedelta(**{unit or "days": float(match.group(1))})


def spelled(age) -> str:
    """A duration in words, the largest whole unit: '1 minute', '30 days', '36 hours'."""
    from arreio.engine.core.wording import counted

    seconds = age.total_seconds()
    for size, name in ((604800, "week"), (86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size and seconds % size == 0:
            return counted(int(seconds // size), name)
    return counted(int(seconds), "second") if seconds == int(seconds) else f"{seconds:g} seconds"

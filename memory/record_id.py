"""ULID-like record ids: `dec-01J5Z3…` — a substore prefix and 26 Crockford base32 characters.

The first 10 characters are the 48-bit millisecond timestamp, the last 16 are 80 random bits, so
ids sort by time as plain strings. Within one process, ids made in the same millisecond increment
the random part of the previous one, so they stay strictly increasing. A clock that steps back gets
fresh ids at its own time: the id always tells the truth about when it was made (injected test
clocks jump around; records sort by their time first anyway).
"""

from __future__ import annotations

import secrets
import threading
from datetime import UTC, datetime, timedelta

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80
_RANDOM_MAX = (1 << _RANDOM_BITS) - 1
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        value, digit = divmod(value, 32)
        chars.append(CROCKFORD[digit])
    return "".join(reversed(chars))


def decode_time_ms(ulid: str) -> int:
    """The millisecond timestamp inside a 26-character ULID (without prefix)."""
    value = 0
    for char in ulid[:10].upper():
        value = value * 32 + CROCKFORD.index(char)
    return value


class UlidGenerator:
    """Monotonic ULID maker for one process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._last_random = 0

    def new(self, now: datetime) -> str:
        # Integer arithmetic: float timestamps can land one millisecond off the `at` field.
        ms = (now - _EPOCH) // _MS
        with self._lock:
            if ms == self._last_ms:
                random = self._last_random + 1
                if random > _RANDOM_MAX:  # 2**80 ids in one ms: move into the next millisecond
                    ms, random = ms + 1, secrets.randbits(_RANDOM_BITS - 1)
            else:
                # One bit of headroom keeps increments inside this millisecond in practice.
                random = secrets.randbits(_RANDOM_BITS - 1)
            self._last_ms, self._last_random = ms, random
        return _encode(ms, 10) + _encode(random, 16)


_GENERATOR = UlidGenerator()


def new_record_id(prefix: str, now: datetime) -> str:
    """`"<prefix>-<ulid>"`, strictly increasing within this process."""
    return f"{prefix}-{_GENERATOR.new(now)}"

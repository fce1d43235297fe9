"""The records a session writes besides messages (a request record each turn, approval decisions, run
markers): frozen when they are appended, and each one's redacted line kept for the rewrites.

A compaction rewrites the file with every record the session holds (one request record a turn: ~1,000
after 1,000 turns). Making sure a record still says what its line says took parsing every line back
and comparing (the larger part of a late compaction). A record frozen on its way in cannot
have changed, so its line is written again as it is.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from arreio.engine.session.format import json_line

__all__ = ["FrozenList", "FrozenRecord", "RecordLines", "freeze"]


def _refuse(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError("a session record cannot change once appended: append a new record instead")


class FrozenRecord(dict):  # type: ignore[type-arg]
    """A record as the session appended it: read like any dict, never changed in place."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return FrozenRecord, (dict(self),)  # pickling a dict subclass would refill it with __setitem__


class FrozenList(list):  # type: ignore[type-arg]
    """A list inside a frozen record (it still compares equal to a list holding the same)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = (
        reverse
    ) = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return FrozenList, (list(self),)


def freeze(value: Any) -> Any:
    """A frozen copy of a JSON-like value (dicts and lists all the way down; other values as they are)."""
    kind = type(value)
    if kind is dict or kind is FrozenRecord:
        return FrozenRecord({key: freeze(item) if type(item) in _CONTAINERS else item for key, item in value.items()})
    if kind is list or kind is tuple or kind is FrozenList:
        return FrozenList([freeze(item) if type(item) in _CONTAINERS else item for item in value])
    return value


_CONTAINERS = frozenset({dict, list, tuple, FrozenRecord, FrozenList})


class RecordLines:
    """The redacted line of each record a session wrote, so a rewrite does not redact every record of
    the history again. A frozen record's line is reused as it is; any other record (a run
    marker, one loaded from the file) is checked against its line and redone when it changed."""

    def __init__(self) -> None:
        # id -> [record, its line as written, the redacted line, a copy of what it held (made lazily)]
        self._lines: dict[int, list[Any]] = {}

    def line(self, record: dict[str, Any], redactor: Any, *, scanned: bool = False) -> bytes:
        """`record`'s line, redacted (`scanned`: its values were redacted already, at first writing;
        a record changed since is scanned like any other)."""
        hit = self._lines.get(id(record))
        if hit is not None and hit[0] is record:
            if type(record) is FrozenRecord:
                return hit[2]
            # Checked against what its line holds (parsed once, then kept: a C-level walk), not by
            # serialising every record of the run again.
            if hit[3] is None:
                hit[3] = json.loads(hit[1])
            if hit[3] == record:
                return hit[2]
        raw = json_line(record)
        clean = redactor.bytes(raw) if redactor is not None and not (scanned and hit is None) else raw
        self._lines[id(record)] = [record, raw, clean, None]
        return clean

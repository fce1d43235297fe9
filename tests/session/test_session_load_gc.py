"""A long history is frozen out of the cyclic collector's walks once loaded. What was
garbage before the load must still be collected, and the loaded messages must still be freed."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from arreio.engine.core.messages import Message
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.session.reading import FREEZE_FROM_LINES


class Node:
    """Weak-referenceable, and in a cycle only the cyclic collector can free."""

    def __init__(self) -> None:
        self.me = self


def _long_session(tmp_path: Path) -> Path:
    header = SessionHeader(id="20260627-160000-cccccc", created_at="2026-06-27T16:00:00.000Z", cwd="/w", model="m")
    with Session.create(tmp_path, header) as session:
        session.append_many([Message.user(f"line {i}") for i in range(FREEZE_FROM_LINES + 10)])
    return session.path


def test_garbage_from_before_a_long_load_is_still_collected(tmp_path: Path) -> None:
    path = _long_session(tmp_path)
    gc.unfreeze()
    try:
        cycle = Node()
        gone = weakref.ref(cycle)
        del cycle  # unreachable now, but only a collection frees it
        loaded, repairs = Session.open(path)
        loaded.close()
        assert repairs == [] and gc.get_freeze_count() > len(loaded.messages)  # the history was frozen
        gc.collect()
        assert gone() is None  # collected before the freeze, not made immortal by it
        first = weakref.ref(loaded.messages[0])
        del loaded
        assert first() is None  # frozen messages are still freed by reference counting
    finally:
        gc.unfreeze()


def test_a_short_load_freezes_nothing(tmp_path: Path) -> None:
    header = SessionHeader(id="20260627-160000-dddddd", created_at="2026-06-27T16:00:00.000Z", cwd="/w", model="m")
    with Session.create(tmp_path, header) as session:
        session.append_many([Message.user(f"line {i}") for i in range(100)])
    gc.unfreeze()
    Session.open(session.path)[0].close()
    assert gc.get_freeze_count() == 0

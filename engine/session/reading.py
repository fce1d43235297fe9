"""Reading a session file: split, header, migrations, record lines, healing (docs/architecture.md invariant 1).

`read_session` only reads; `Session.open` decides what to write back. The cyclic garbage collector
is held off while the lines become objects, and a long history is frozen out of its
walks afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from arreio.engine.core.errors import SessionError
from arreio.engine.core.messages import Message
from arreio.engine.core.regular_file import Limit, read_bytes
from arreio.engine.session.format import SessionHeader, needs_rewrite, parse_header, upgrade
from arreio.engine.session.healing import Placed, Repair, awaiting_approval, heal, remap_placed, scan_lines

__all__ = ["FREEZE_FROM_LINES", "SessionRead", "read_session"]

FREEZE_FROM_LINES = 20_000  # below this, a load's objects cost the collector little


@dataclass
class SessionRead:
    """What a session file holds, healed: what `Session.open` builds the session from."""

    header: SessionHeader
    messages: list[Message]
    runs: list[dict[str, Any]]
    extra: list[dict[str, Any]]
    placed: Placed
    repairs: list[Repair]
    migrated: bool  # an older format: the file is written back in the current one
    good_end: int  # bytes that end on a clean line (a torn tail is cut here)


def read_session(path: Path) -> SessionRead:
    """Skip bad lines, drop a torn tail, heal pairing; a `SessionError` when there is no session."""
    try:
        data = read_bytes(path, limit=Limit.SESSION)
    except FileNotFoundError:
        raise SessionError(f"no session file at {path}") from None
    except OSError as error:  # a pipe, a device, a file past the limit (`UnfitFile`) too
        raise SessionError(f"cannot read session {path}: {error.strerror}") from None
    if not data or data.isspace():
        raise SessionError(f"{path}: session file is empty (not a session)")

    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline, as it should
    header = parse_header(path, lines[0] if lines else tail)
    body = lines[1:] if lines else []
    header_unterminated = not lines
    if header_unterminated:
        tail = b""  # the header itself is the unterminated last line
    migrated = needs_rewrite(header.get("version"))
    header, body = upgrade(path, header, body + [tail] if tail else body)
    if tail:
        tail = body.pop()
    try:
        session_header = SessionHeader.model_validate({k: v for k, v in header.items() if k != "type"})
    except ValidationError as error:
        raise SessionError(f"{path}: invalid session header ({error.error_count()} problems)") from None

    with collector_held(freeze=len(body) >= FREEZE_FROM_LINES):
        raw, runs, extra, placed, repairs = scan_lines(body, tail)
        messages, heal_repairs = heal(raw, keep_open=awaiting_approval(raw, extra))
    if header_unterminated:
        repairs.insert(0, Repair(kind="torn_tail", detail="header line had no newline; kept", line=1))
    repairs.extend(heal_repairs)
    if heal_repairs:
        placed = remap_placed(placed, raw, messages)
    return SessionRead(session_header, messages, runs, extra, placed, repairs, migrated, len(data) - len(tail))


@contextmanager
def collector_held(*, freeze: bool) -> Iterator[None]:
    """No cyclic collection inside: parsing makes millions of objects and no cycles, and the
    collector would walk the whole growing heap again and again (85% of a 100,000-message load).
    With `freeze`, what exists at the end is frozen out of later walks: a long history lives as long
    as its session, its first collection afterwards would walk every object just made (0.3 s at
    100,000 messages) and each full one later again. Refcounting still frees frozen objects (no
    message, nor the session, forms a cycle); what is garbage beforehand is collected first, so it
    is not made immortal."""
    collecting = gc.isenabled()
    if freeze and collecting:
        gc.collect()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if collecting:
            gc.enable()

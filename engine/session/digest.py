"""The digest of a history, kept as the history grows (issue 23: every per-turn step O(new messages)).

A request record carries `messages_digest` = `digest("\\n".join(m.model_dump_json() for m in sent))`
(`governance/audit.digest`: sha256 of the canonical JSON of that text). JSON-escaping a string is done
character by character, so the canonical text of a join is the join of its pieces' escapes, and the
hash can be fed one message at a time. `RollingDigest` does that, lazily, with a snapshot every
`EVERY` messages: a message replaced in place (a prune) rewinds to the snapshot before it, so only
the messages after that point are fed again. Equal, byte for byte, to the full computation (a test
checks it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arreio.engine.messages import Message

EVERY = 32  # messages between snapshots: a rewind feeds at most this many again, plus what follows
KEEP = 2048  # the newest messages' escaped text is kept, so feeding them again is only hashing


def escaped(stored_json: str) -> bytes:
    """A message as the digest sees it: its stored JSON, escaped as a JSON string body."""
    return json.dumps(stored_json, ensure_ascii=False)[1:-1].encode()


class RollingDigest:
    """`digest(messages)` for a list that grows at its end; `rewind(index)` when `messages[index:]`
    changed (or the list was replaced: `rewind(0)`). `form(message)` is the message's JSON as the
    file stores it."""

    def __init__(self, form: Callable[[Message], str] = lambda m: m.model_dump_json()) -> None:
        self._form = form
        self._hasher: Any = self._fresh()
        self._count = 0  # messages fed
        self._snapshots: list[tuple[int, Any]] = [(0, self._hasher.copy())]
        self._fed: list[tuple[Any, bytes] | None] = []  # per position fed: (message, escaped), newest KEEP

    @staticmethod
    def _fresh() -> Any:
        hasher = hashlib.sha256()
        hasher.update(b'"')
        return hasher

    def rewind(self, index: int) -> None:
        while self._snapshots[-1][0] > index:
            self._snapshots.pop()
        count, hasher = self._snapshots[-1]
        if count < self._count:
            self._count, self._hasher = count, hasher.copy()
        # What was fed stays known: a position is reused only while it holds the same message object.

    def digest(self, messages: list[Message]) -> str:
        if len(messages) < self._count:
            self.rewind(len(messages))
        for message in messages[self._count:]:
            if self._count:
                self._hasher.update(b"\\n")
            position = self._count
            known = self._fed[position] if position < len(self._fed) else None
            if known is not None and known[0] is message:
                text = known[1]
            else:
                text = escaped(self._form(message))
                if position < len(self._fed):
                    self._fed[position] = (message, text)  # a replaced message; the ones after it stay known
                else:
                    self._fed.extend([None] * (position - len(self._fed)))
                    self._fed.append((message, text))
                if position >= KEEP:
                    self._fed[position - KEEP] = None
            self._hasher.update(text)
            self._count += 1
            if self._count % EVERY == 0:
                self._snapshots.append((self._count, self._hasher.copy()))
        final = self._hasher.copy()
        final.update(b'"')
        return "sha256:" + final.hexdigest()[:16]

"""The digest of a history, kept as the history grows (every per-turn step O(new messages)).

A request record carries `messages_digest` = `digest("\\n".join(m.model_dump_json() for m in sent))`
(`governance/audit.digest`: sha256 of the canonical JSON of that text). JSON-escaping a string is done
character by character, so the canonical text of a join is the join of its pieces' escapes, and the
hash can be fed one message at a time. `RollingDigest` does that, lazily, with a snapshot every
`EVERY` messages: a message replaced in place (a prune) rewinds to the snapshot before it, so only
the messages after that point are fed again. A message's escaped text is kept by the message (its
identity), so feeding it again — after a prune, or a compaction that moved the tail to the front —
is only hashing. Equal, byte for byte, to the full computation (a test checks it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from arreio.engine.session.format import json_bytes

if TYPE_CHECKING:
    from arreio.engine.core.messages import Message

EVERY = 32  # messages between snapshots: a rewind feeds at most this many again, plus what follows
KEEP = 2048  # the escaped text of this many messages (the newest made) is kept


def escaped(stored_json: str) -> bytes:
    """A message as the digest sees it: its stored JSON, escaped as a JSON string body."""
    return json.dumps(stored_json, ensure_ascii=False)[1:-1].encode()


_CONTROLS = bytes(range(0x20))


def escaped_line(line: bytes) -> bytes:
    """`escaped` of a stored message line's JSON, from the line's bytes: JSON text holds no control
    character (a string's are escaped), so escaping it as a string body only doubles backslashes and
    escapes quotes; no decoding, no encoding (a line that holds one anyway takes the long way)."""
    body = json_bytes(line)
    if len(body.translate(None, _CONTROLS)) != len(body):  # (a copy at memory speed: ~8x a regex search)
        return escaped(body.decode("utf-8", "surrogateescape"))
    return body.replace(b"\\", b"\\\\").replace(b'"', b'\\"')


class RollingDigest:
    """`digest(messages)` for a list that grows at its end; `rewind(index)` when `messages[index:]`
    changed (or the list was replaced: `rewind(0)`). `form(message)` is the message's JSON as the
    file stores it, escaped (`escaped`, or `escaped_line` from the stored line)."""

    def __init__(self, form: Callable[[Message], bytes] = lambda m: escaped(m.model_dump_json())) -> None:
        self._form = form
        self._hasher: Any = self._fresh()
        self._count = 0  # messages fed
        self._snapshots: list[tuple[int, Any]] = [(0, self._hasher.copy())]
        self._known: dict[int, tuple[Any, bytes]] = {}  # id(message) -> (message, escaped), oldest first

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
        # What was fed stays known, by message: the same object gives the same text.

    def keep_only(self, alive: set[int]) -> None:
        """Forget the texts of messages whose ids are not in `alive` (a compaction dropped them)."""
        self._known = {key: value for key, value in self._known.items() if key in alive}

    def digest(self, messages: list[Message]) -> str:
        if len(messages) < self._count:
            self.rewind(len(messages))
        while self._count < len(messages):
            # Fed a snapshot's stretch at a time, in one update (a message per call before).
            end = min(len(messages), (self._count // EVERY + 1) * EVERY)
            joined = b"\\n".join([self._text(m) for m in messages[self._count : end]])
            if self._count:
                self._hasher.update(b"\\n")
            self._hasher.update(joined)
            self._count = end
            if end % EVERY == 0:
                self._snapshots.append((end, self._hasher.copy()))
        final = self._hasher.copy()
        final.update(b'"')
        return "sha256:" + final.hexdigest()[:16]

    def _text(self, message: Message) -> bytes:
        known = self._known.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        text = self._form(message)
        self._known[id(message)] = (message, text)
        if len(self._known) > KEEP:
            del self._known[next(iter(self._known))]
        return text

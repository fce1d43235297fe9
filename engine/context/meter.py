"""What the context hook measures and remembers between turns: the token weight of a request and of
the session's history, and how much of a request repeats the previous one's prefix.

Everything here is a cache over values that come back unchanged turn after turn — the frozen system
prompt, the registry's tool specs, the history's messages — so a turn weighs only what is new. The
prompt's and the tools' estimates are kept in `SameObjects` memos (asked with the objects themselves,
compared by identity); the history's weights are the session's running sums (`prefix_sums.py`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from arreio.engine.context.prefix_sums import PrefixSums
from arreio.engine.core.tokens import Calibrator, estimate_message, estimate_prefix

if TYPE_CHECKING:
    from arreio.engine.context.stats import ContextStats
    from arreio.engine.core.messages import Message
    from arreio.engine.core.model_io import ModelRequest


class SameObjects:
    """A value worked out once per sequence of objects that keeps coming back (the same system blocks,
    the same specs): looked up by `key` (equal) and the objects themselves (identical), the newest few
    kept. Holding the objects, it cannot mistake a new object for a freed one."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self.entries: list[tuple[Any, tuple[Any, ...], Any]] = []

    def get(self, key: Any, objects: tuple[Any, ...], make: Any) -> Any:
        for index, (kept_key, kept, value) in enumerate(self.entries):
            if kept_key == key and len(kept) == len(objects) and all(a is b for a, b in zip(kept, objects)):
                if index:  # the newest first: the next turn asks the same again
                    self.entries.insert(0, self.entries.pop(index))
                return value
        value = make()
        self.entries.insert(0, (key, objects, value))
        del self.entries[self.size :]
        return value


class RequestMeter:
    """Weighs requests and histories for one run (every runner's: sub-agents' sessions are kept apart
    by session id). `profile` and `model` are the model being measured for, set by the hook."""

    def __init__(self, calibrator: Calibrator) -> None:
        self.calibrator = calibrator
        self.profile = "claude"
        self.model = ""
        self.raw_estimate = 0.0  # the last request's estimate (uncalibrated)
        self._weights: dict[int, tuple[Any, float]] = {}  # id(message) -> (message, tokens)
        self._hashes: dict[int, tuple[Any, int]] = {}  # id(message) -> (message, hash), made when needed
        self._sums: dict[str, PrefixSums] = {}  # per session id: the history's running sums
        self._prefixes = SameObjects()  # (system blocks and specs) -> their estimate
        self._tool_hashes = SameObjects()  # specs -> a hash of what they say
        self._previous: list[tuple[int, float]] = []
        self._last_measure: tuple[Any, ...] | None = None  # what `measure` may extend next time
        self._last_head: list[tuple[int, float]] = []
        self._last_request: list[Any] | None = None

    # -- one message, one prefix --------------------------------------------------------------------
    def tokens(self, message: Message) -> float:
        cached = self._weights.get(id(message))
        if cached is None or cached[0] is not message:
            cached = self._weights[id(message)] = (message, estimate_message(message, self.profile))
        return cached[1]

    def _entry(self, message: Message) -> tuple[float, int]:
        """(tokens, content hash): the hash only for a request off the usual path (`measure`)."""
        cached = self._hashes.get(id(message))
        if cached is None or cached[0] is not message:
            cached = self._hashes[id(message)] = (message, hash(message.model_dump_json()))
        return self.tokens(message), cached[1]

    def weigh(self, message: Message) -> float:
        return self.tokens(message) * self.calibrator.factor(self.model)

    def prefix(self, system: list[Any], specs: list[Any]) -> float:
        """`estimate_prefix`, once per distinct system prompt and tool list (the same objects come
        back every turn: the prompt is frozen, the registry builds its specs once)."""
        profile = self.profile
        return self._prefixes.get(
            (profile, len(system)), (*system, *specs), lambda: estimate_prefix(system, specs, profile)
        )

    def _tools_hash(self, tools: list[Any]) -> int:
        return self._tool_hashes.get(
            None, tuple(tools), lambda: hash(json.dumps([t.model_dump() for t in tools], sort_keys=True))
        )

    # -- the history ----------------------------------------------------------------------------------
    def sums(self, session: Any) -> PrefixSums:
        """The session's running sums, brought up to date (only messages appended or replaced since
        the last call are weighed)."""
        sums = self._sums.get(session.id)
        if sums is None:
            sums = self._sums[session.id] = PrefixSums(self.tokens)
        sums.sync(session)
        return sums

    def context_tokens(self, session: Any, system: list[Any], specs: list[Any], model: str) -> int:
        """What the next request would weigh, calibrated for `model`."""
        return self.calibrator.tokens(model, self.prefix(system, specs) + self.sums(session).total)

    def forget_all_but(self, messages: list[Any]) -> None:
        """Forget the estimates of messages no history holds any more (they kept a long run's messages alive)."""
        alive = {id(m) for m in messages}
        self._weights = {k: v for k, v in self._weights.items() if k in alive}
        self._hashes = {k: v for k, v in self._hashes.items() if k in alive}

    # -- one request ----------------------------------------------------------------------------------
    def measure(self, request: ModelRequest, session: Any, stats: ContextStats) -> None:
        """The request's estimate and how much of it repeats the previous request's prefix. When the
        request is the session's history grown by appends since the last one (the usual turn), the
        whole previous request is the common prefix and only new messages are weighed."""
        head = [(self._tools_hash(request.tools), self.prefix([], request.tools))]
        head += [(hash((b.name, b.text)), self.prefix([b], [])) for b in request.system]
        messages, own = request.messages, session.messages
        is_history = len(messages) == len(own) and (not own or (messages[0] is own[0] and messages[-1] is own[-1]))
        last = self._last_measure
        if is_history and last is not None and last[0] == session.id and last[2] == head:
            # The previous request was this history too: what it shares with this one is the head
            # and the messages no prune or rewrite touched since (appends only add at the end).
            sums = self.sums(session)
            kept = min(session.unchanged_prefix(last[1]), last[3])
            head_weight = sum(w for _, w in head)
            self.raw_estimate = head_weight + sums.total
            common = head_weight + sums.upto(kept) if kept < last[3] else last[5]
            self._previous = []  # rebuilt only if a request off the fast path needs it
        else:
            elements = head + [(h, w) for w, h in (self._entry(m) for m in messages)]
            previous = self._previous or self._rebuild_previous()
            common = 0.0
            for (h1, w), (h0, _) in zip(elements, previous):
                if h1 != h0:
                    break
                common += w
            self.raw_estimate = sum(w for _, w in elements)
            self._previous = elements
        self._last_measure = (
            (session.id, session.revision, head, len(messages), messages[-1] if messages else None, self.raw_estimate)
            if is_history
            else None
        )
        self._last_head, self._last_request = head, messages
        stats.prefix_tokens += common
        stats.request_tokens += self.raw_estimate
        stats.peak_context_tokens = max(
            stats.peak_context_tokens, self.calibrator.tokens(request.model, self.raw_estimate)
        )

    def _rebuild_previous(self) -> list[tuple[int, float]]:
        """The previous request's elements, when the fast path did not keep them."""
        if self._last_request is None:
            return []
        return [*self._last_head, *((h, w) for w, h in (self._entry(m) for m in self._last_request))]

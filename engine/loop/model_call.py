"""One model call of a step: the reply streamed (deltas yielded as they come), the harness's retries
(docs/architecture.md section 5), one compaction on a context overflow, and the run's fallback models
(`fallback.py`) once a model has failed for good with a retryable error. A reply that repeats itself
(`repetition.py`) is stopped there and fails the step.

`ModelCall(runner, request).run()` ends with the folded `Reply`, or an `Outcome` when the call
failed for good. It writes nothing of the runner's: after each attempt, and after a switch, it yields
a `CallState` the runner records (how the attempt ended — hooks read it, `on_context_overflow` the
error — and, after a switch, the model and provider that serve the rest of the run, so the reply is
stamped with the new model), then `model_switch`. What the run's counters take in (the attempt's
usage, a retry, a switch) travels on the `CallState` too, and the runner counts it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arreio.engine.core import events as ev
from arreio.engine.core.errors import ArreioError
from arreio.engine.core.messages import Message
from arreio.engine.core.model_io import Done, ModelRequest, ProviderError, TextChunk, ThinkingChunk, Usage
from arreio.engine.core.surrogates import repaired
from arreio.engine.core.tokens import estimated_usage
from arreio.engine.loop.fallback import may_switch
from arreio.engine.loop.outcome import Outcome
from arreio.engine.loop.repetition import Repetition
from arreio.engine.loop.reply import Reply, fold
from arreio.engine.providers.retry import RetryDecision, decide_retry

if TYPE_CHECKING:
    from arreio.engine.core.ports import Provider
    from arreio.engine.loop.runner import Runner


@dataclass
class CallState:
    """Where a model call stands, for the runner to record before the call goes on."""

    request: ModelRequest  # as sent (the model a switch moved to included)
    model: str
    provider: Provider
    usage: Usage  # the step's so far, every attempt (and model) included
    done: Done | None = None  # how the last attempt ended (None: no attempt since the switch)
    # What the run's counters take in (the runner counts them: who counts stays outside who answers)
    spent: Usage | None = None  # the attempt just ended, by `model` (None: counted already)
    retried: bool = False  # the attempt is retried
    switched: dict[str, str] | None = None  # a switch to a fallback model: {from, to, reason}


class ModelCall:
    """Asks `runner`'s model for the reply to `request` (see the module docstring)."""

    def __init__(self, runner: Runner, request: ModelRequest) -> None:
        self.runner, self.request = runner, request
        self.model, self.provider = runner.model, runner.provider  # a switch moves both
        self.usage = Usage()  # this step's usage, every attempt (and model) included

    def _state(self, request: ModelRequest, done: Done | None, **counted: Any) -> CallState:
        return CallState(request, self.model, self.provider, self.usage, done, **counted)

    async def run(self) -> AsyncIterator[ev.Event | Reply | Outcome | CallState]:
        runner, request = self.runner, self.request
        shown = False  # this attempt has streamed text: a retry withdraws it (the `retry` event says so)
        overflowed, attempt, waited = False, 0, 0.0
        while True:
            attempt += 1
            chunks, looping, watch = [], None, Repetition()
            stream = runner.watchdog.stream(self.provider.stream(request))
            async for chunk in stream:
                chunks.append(chunk)
                if isinstance(chunk, TextChunk) and chunk.text:
                    shown = True
                    yield ev.TextDelta(text=repaired(chunk.text))  # the folded reply joins a split pair
                    looping = watch.feed(chunk.text)
                elif isinstance(chunk, ThinkingChunk) and chunk.text and not chunk.redacted:
                    yield ev.ThinkingDelta(text=repaired(chunk.text))
                    looping = watch.feed(chunk.text, "thinking")
                if looping:  # a model in a loop: stop it now, not at the reply cap (the stream is closed)
                    await stream.aclose()
                    chunks.append(Done(stop_reason="error", error=ProviderError(kind="fatal", message=looping)))
                    break
            reply = fold(chunks)
            if reply.done.usage.estimated and reply.done.error is None:  # the server counted nothing
                reply.done.usage = estimated_usage(request, Message.assistant(reply.parts, model=self.model))
                if not runner.totals.usage.estimated:
                    yield ev.Warning_(
                        code="usage_estimated",
                        message=(
                            f"{self.model}'s server reported no token usage; the run's token figures are arreio's "
                            "estimates (budgets and the context calibration work from them)"
                        ),
                    )
            self.usage = self.usage + reply.done.usage
            yield self._state(request, reply.done, spent=reply.done.usage)  # recorded before a hook is asked
            error = reply.done.error
            if error is None:
                yield reply
                return
            if error.kind == "context_overflow" and not overflowed:
                overflowed = True  # compact and retry once, then fail clearly
                shrunk = await runner.hooks.on_context_overflow(runner.view)
                if shrunk is not None:
                    for event in shrunk:
                        yield event
                    request = request.model_copy(update={"messages": list(runner.session.messages)})
                    yield self._state(request, reply.done)
                    continue
            decision = decide_retry(error, attempt, runner.settings.retry, runner.rng, waited)
            if not decision.retry:
                switch = self._switch(error, decision)
                if isinstance(switch, Outcome):
                    yield switch
                    return
                request = request.model_copy(update={"model": self.model})
                switched = {"from": switch.from_model, "to": switch.to_model, "reason": switch.reason}
                yield self._state(request, reply.done, switched=switched)
                yield switch.model_copy(update={"withdraws_text": shown})
                shown = False
                attempt, overflowed, waited = 0, False, 0.0  # the new model has retries of its own
                continue
            yield self._state(request, reply.done, retried=True)
            yield ev.Retry(attempt=attempt, delay_s=decision.delay_s, reason=decision.reason, withdraws_text=shown)
            shown = False
            await runner.clock.sleep(decision.delay_s)
            waited += decision.delay_s

    def _switch(self, error: ProviderError, decision: RetryDecision) -> ev.ModelSwitch | Outcome:
        """The next fallback model takes the step (and the rest of the run), or the call fails."""
        runner = self.runner
        failed = Outcome.of("failed", decision.failure, auth=error.kind == "auth")
        if not may_switch(error):
            return failed
        before = self.model
        try:
            found = runner.fallback.next(before)
        except ArreioError as problem:  # a fallback model that cannot be built (its key is missing)
            return Outcome.of(
                "failed", f"{decision.failure}; the fallback model could not take over: {problem.message}"
            )
        if found is None:
            return failed
        self.model, self.provider = found
        reason = " ".join(decision.failure.split())[:300]
        return ev.ModelSwitch(from_model=before, to_model=self.model, reason=reason)

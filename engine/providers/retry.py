"""The harness owns retries (docs/architecture.md section 5). Pure decisions; the runner does the waiting."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from arreio.engine.core.config import RetrySettings
from arreio.engine.core.model_io import ProviderError


def backoff(attempt: int, *, base_s: float, cap_s: float, rng: random.Random) -> float:
    """Exponential backoff with full jitter in the upper half: attempt 1 waits ~base, capped at `cap_s`."""
    ceiling = min(cap_s, base_s * (2 ** max(0, attempt - 1)))
    return round(ceiling * (0.5 + 0.5 * rng.random()), 3)


@dataclass(frozen=True)
class RetryDecision:
    retry: bool
    delay_s: float = 0.0
    reason: str = ""
    failure: str = ""  # why we stop, when retry is False


_NO_KEY_SAID = re.compile(r"missing credentials|api_key client option must be set|no api key", re.IGNORECASE)
_LOADING = re.compile(r"\bloading\b|\bnot (?:yet )?ready\b|\bwarming up\b", re.IGNORECASE)


def is_loading(error: ProviderError) -> bool:
    """A server that says its model is still loading (llama.cpp's 503 'Loading model' after a restart)."""
    return error.kind == "retryable" and error.status == 503 and bool(_LOADING.search(error.message))


def decide_retry(
    error: ProviderError, attempt: int, policy: RetrySettings, rng: random.Random, waited_s: float = 0.0
) -> RetryDecision:
    """Whether a failed model call (the `attempt`-th) is tried again, and after how long. `waited_s`:
    the time this step has already spent waiting between attempts (a loading model gets
    `policy.loading_wait_s` in all, however many attempts that takes)."""
    status = f" (HTTP {error.status})" if error.status and str(error.status) not in error.message else ""
    reason = f"{error.message}{status}"
    if error.kind == "auth":
        advice = (
            "; set the provider's API key (any non-empty value works for a local server that checks none)"
            if _NO_KEY_SAID.search(error.message)
            else ""
        )
        return RetryDecision(False, failure=f"the provider refused the credentials{status}: {error.message}{advice}")
    if error.kind == "fatal":
        return RetryDecision(False, failure=f"the model call failed{status}: {error.message}")
    if error.kind == "context_overflow":
        return RetryDecision(
            False, failure=f"the conversation no longer fits the model's context window: {error.message}"
        )
    if is_loading(error):
        if waited_s >= policy.loading_wait_s:
            return RetryDecision(
                False,
                failure=f"the server was still loading its model after {waited_s:.0f}s "
                f"(retry.loading_wait_s): {reason}",
            )
        delay = min(
            backoff(attempt, base_s=policy.base_delay_s, cap_s=min(policy.max_delay_s, 5.0), rng=rng),
            max(0.5, policy.loading_wait_s - waited_s),
        )
        return RetryDecision(True, delay_s=delay, reason=f"{reason}; waiting for the model to load")
    if attempt >= policy.max_attempts:
        return RetryDecision(False, failure=f"the model call still failed after {attempt} attempts: {reason}")
    if error.retry_after is not None:
        if error.retry_after > policy.retry_after_max_s:
            return RetryDecision(
                False,
                failure=(
                    f"the provider asked to wait {error.retry_after:g}s before retrying, more than the "
                    f"{policy.retry_after_max_s:g}s allowed (retry.retry_after_max_s): {reason}"
                ),
            )
        return RetryDecision(True, delay_s=float(error.retry_after), reason=reason)
    return RetryDecision(
        True, delay_s=backoff(attempt, base_s=policy.base_delay_s, cap_s=policy.max_delay_s, rng=rng), reason=reason
    )

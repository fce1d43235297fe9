"""Pieces every adapter shares: tool-argument assembly and failure classification.

Nothing here imports an SDK. Exceptions are read by duck typing (`status_code`, `body`, `response`,
the names in the class hierarchy) so one classifier serves the anthropic and openai SDKs, litellm
(whose exceptions subclass openai's) and the transport errors of httpx/httpx2 underneath them.
"""

from __future__ import annotations

import email.utils
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from arreio.engine.core.model_io import ErrorKind, ProviderError, ToolCallDone
from arreio.engine.core.nesting import json_loads

# -- tool arguments ----------------------------------------------------------------------------

INVALID_ARGS_KEY = "_invalid_json_arguments"
"""When a model sends arguments that are not a JSON object, the call keeps the raw text under this
key: tool validation then refuses it and the model sees why, instead of a tool running on `{}`."""


def parse_arguments(raw: str) -> dict[str, Any] | None:
    """The arguments of a tool call from their streamed text. `""` (and whitespace) means `{}`;
    `None` means the text is not a JSON object (truncated by max_tokens, or malformed)."""
    if not raw.strip():
        return {}
    try:
        value = json_loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    chunks: list[str] = field(default_factory=list)


class ToolCallAssembler:
    """Collects tool calls that arrive in pieces, keyed by the stream's block/choice index.

    Ids and names arrive once (some servers repeat them; the first non-empty value wins), argument
    text arrives as fragments in order. `finish` returns the calls in index order — the model's
    declared order, which pairing keeps.
    """

    def __init__(self) -> None:
        self._calls: dict[int, _PendingCall] = {}

    def __bool__(self) -> bool:
        return bool(self._calls)

    def add(self, index: int, *, id: str | None = None, name: str | None = None, args: Any = None) -> None:
        call = self._calls.setdefault(index, _PendingCall())
        if id and not call.id:
            call.id = id
        if name and not call.name:
            call.name = name
        if args is not None and not isinstance(args, str):
            # a server that sends the arguments as a JSON object, not its text (llama.cpp's server
            # did in early 2026): the object is the arguments
            args = json.dumps(args, ensure_ascii=False)
        if args:
            call.chunks.append(args)

    def whole(self, index: int) -> bool:
        """The call at `index` has its name and arguments that already parse as an object: a
        delta that names a tool again, with no index or id to tell, starts another call."""
        call = self._calls.get(index)
        return (
            call is not None
            and bool(call.name)
            and bool(call.chunks)
            and parse_arguments("".join(call.chunks)) is not None
        )

    def pop(self, index: int, *, truncated: bool = False) -> ToolCallDone | None:
        """The finished call at `index`, or None when its arguments were cut off by `truncated`."""
        call = self._calls.pop(index, None)
        if call is None:
            return None
        raw = "".join(call.chunks)
        args = parse_arguments(raw)
        if args is None:
            if truncated:
                return None  # half a call is worse than none: the model is asked again
            args = {INVALID_ARGS_KEY: raw}
        return ToolCallDone(id=call.id or f"call_{index}", name=call.name, arguments=args)

    def finish(self, *, truncated: bool = False) -> list[ToolCallDone]:
        out = [self.pop(i, truncated=truncated) for i in sorted(self._calls)]
        return [c for c in out if c is not None]


# -- failure classification --------------------------------------------------------------------

_AUTH_TYPES = {"authentication_error", "permission_error", "invalid_api_key"}
# A client that refused to send a request without a key (litellm reports it as HTTP 500): a
# configuration error, which no retry fixes.
_NO_KEY = re.compile(
    r"missing credentials|api_key client option must be set|no api key|api key (?:is )?(?:missing|not set)"
    r"|please pass an `?api_key",
    re.IGNORECASE,
)
_FATAL_CODES = {"insufficient_quota", "billing_hard_limit_reached"}  # a 429 that waiting will not fix
_RETRY_TYPES = {
    "overloaded_error",
    "rate_limit_error",
    "api_error",
    "server_error",
    "timeout_error",
    "rate_limit_exceeded",
    "service_unavailable",
}
_OVERFLOW_CODES = {
    "context_length_exceeded",
    "string_above_max_length",
    "model_context_window_exceeded",
    "exceed_context_size_error",  # llama.cpp's server, as the error's type
}
_OVERFLOW_PHRASES = (
    "prompt is too long",  # Anthropic invalid_request_error
    "maximum context length",  # OpenAI and most OpenAI-compatible servers (vLLM)
    "context length exceeded",
    "context_length_exceeded",
    "context window",
    "exceed context limit",  # Anthropic: input length and max_tokens exceed context limit
    "exceeds the available context size",  # llama.cpp's server
    "context length of only",  # LM Studio: "...the model is loaded with context length of only 4096 tokens"
    "reached context length of",  # LM Studio, when the reply runs out of room mid-generation
)
_CONNECTION_CLASSES = {
    "APIConnectionError",
    "APITimeoutError",
    "Timeout",
    "TransportError",
    "TimeoutException",
    "NetworkError",
    "RemoteProtocolError",
    "ReadError",
    "ConnectError",
    "ConnectionError",
    "TimeoutError",
    "IncompleteRead",
}
_TIMEOUT_CLASSES = {"APITimeoutError", "Timeout", "TimeoutException", "TimeoutError"}


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, else `retry-after` as seconds or an
    HTTP date. None when absent or unreadable; never negative. A date counts from the response's own
    `Date` (the clock that wrote the retry date: a skewed local clock neither stretches nor cuts the
    wait), else from `now` (epoch seconds); with neither, the harness's own backoff decides (None)."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if now is None:
        try:
            sent = email.utils.parsedate_to_datetime(lower.get("date", ""))
        except (TypeError, ValueError, IndexError):
            return None
        if sent is None:
            return None
        now = sent.timestamp()
    return max(0.0, when.timestamp() - now)


def error_fields(body: object) -> tuple[str | None, str | None, str | None]:
    """`(type, code, message)` of an error body, whether it is wrapped (`{"error": {...}}`, the
    Anthropic and OpenAI HTTP shape) or bare (what the SDKs hand over after unwrapping)."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            body = inner
        elif isinstance(inner, str):
            return None, None, inner
    if not isinstance(body, Mapping):
        return None, None, (str(body) if body else None)
    t, c, m = body.get("type"), body.get("code"), body.get("message")
    return (t if isinstance(t, str) else None, str(c) if c is not None else None, m if isinstance(m, str) else None)


def classify(
    status: int | None, body: object = None, *, headers: Mapping[str, str] | None = None, message: str = ""
) -> ProviderError:
    """The kind of one HTTP-level failure, from its status, body and headers (docs/architecture.md section 5).

    The body wins over the status where they disagree: an error event inside a 200 stream carries
    its real cause only in `error.type`.
    """
    etype, code, body_msg = error_fields(body)
    text = body_msg or message or (f"HTTP {status}" if status else "model call failed")
    haystack = f"{text} {code or ''}".lower()
    kind: ErrorKind
    # the phrases are read only on a refused request: a 429 "tokens per minute" or a 5xx is not an overflow
    refused = status is None or status == 200 or (400 <= status < 500 and status != 429)
    if (
        code in _OVERFLOW_CODES
        or etype in _OVERFLOW_CODES
        or status == 413
        or (refused and any(p in haystack for p in _OVERFLOW_PHRASES))
    ):
        kind = "context_overflow"
    elif status in (401, 403) or etype in _AUTH_TYPES or code in _AUTH_TYPES or _NO_KEY.search(text):
        kind = "auth"
    elif etype in _FATAL_CODES or code in _FATAL_CODES:
        kind = "fatal"
    elif etype in _RETRY_TYPES or code in _RETRY_TYPES:
        kind = "retryable"
    elif status is None or status == 200:
        # an error inside an accepted stream with no known type: the server broke, not the request
        kind = "fatal" if etype == "invalid_request_error" else "retryable"
    elif status in (408, 409, 425, 429) or status >= 500:
        kind = "retryable"
    else:
        kind = "fatal"
    label = etype or code
    prefix = f"HTTP {status}" if status and status != 200 else "stream error"
    return ProviderError(
        kind=kind,
        status=status,
        retry_after=parse_retry_after(headers),
        message=f"{prefix}{f' {label}' if label else ''}: {text}"[:500],
        window=_refusal_window(text, body) if kind == "context_overflow" else None,
    )


def _refusal_window(text: str, body: object) -> int | None:
    from arreio.engine.providers.server_window import window_of_refusal

    try:
        shown = json.dumps(body) if isinstance(body, Mapping) else ""
    except (TypeError, ValueError):
        shown = ""
    return window_of_refusal(f"{text} {shown}")


def _class_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def classify_exception(exc: BaseException, *, provider: str) -> ProviderError:
    """The kind of a failure raised by an SDK, litellm or the transport under them."""
    names = _class_names(exc)
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    body = getattr(exc, "body", None)
    message = str(getattr(exc, "message", "") or exc) or type(exc).__name__
    if "ContextWindowExceededError" in names:  # litellm's own normalisation of every vendor
        return ProviderError(
            kind="context_overflow",
            status=status,
            message=f"{provider}: {message}"[:500],
            window=_refusal_window(message, body),
        )
    if status is None and body is None:
        # no HTTP answer at all: the transport failed, or the code did
        cause = exc.__cause__ or exc.__context__
        if cause is not None and str(cause) and str(cause) not in message:
            message = f"{message} ({cause})"  # openai says only "Connection error."; the cause says why
        if names & _TIMEOUT_CLASSES:
            return ProviderError(kind="retryable", message=f"{provider}: timed out: {message}"[:500])
        if names & _CONNECTION_CLASSES:
            return ProviderError(kind="retryable", message=f"{provider}: {_unreachable(exc, message)}"[:500])
        if "JSONDecodeError" in names:  # a garbled event: a broken stream, not a broken request
            return ProviderError(kind="retryable", message=f"{provider}: malformed stream data: {message}"[:500])
        if names & {"AuthenticationError", "PermissionDeniedError"}:
            return ProviderError(kind="auth", message=f"{provider}: {message}"[:500])
        return ProviderError(kind="fatal", message=f"{provider}: {type(exc).__name__}: {message}"[:500])
    response = getattr(exc, "response", None)
    headers = _as_mapping(getattr(response, "headers", None) or getattr(exc, "headers", None))
    err = classify(status, body, headers=headers, message=message)
    return err.model_copy(update={"message": f"{provider}: {err.message}"[:500]})


def _unreachable(exc: BaseException, message: str) -> str:
    """`cannot reach http://127.0.0.1:9: connection refused` — the address and the cause, as deep as
    the exception chain goes (the SDKs say only "Connection error.")."""
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None)
    where = f"{url.scheme}://{url.netloc.decode() if isinstance(url.netloc, bytes) else url.netloc}" if url else ""
    reason, seen = "", exc
    while seen is not None:
        if isinstance(seen, OSError) and (seen.errno or seen.strerror):
            # the errno's own words ("connection refused"), not asyncio's "connect call failed (…)"
            # (a resolver error has a negative errno and its own words: "name or service not known")
            ok = isinstance(seen.errno, int) and seen.errno > 0
            reason = (os.strerror(seen.errno) if ok else str(seen.strerror or seen)).lower()
        seen = seen.__cause__ or seen.__context__
    if not where:
        return f"connection failed: {message}"
    return f"cannot reach {where}: {reason or message}"


def _as_mapping(headers: Any) -> Mapping[str, str] | None:
    if headers is None:
        return None
    try:
        return {str(k): str(v) for k, v in dict(headers).items()}
    except (TypeError, ValueError):
        return None


def stream_cut(provider: str, detail: str = "") -> ProviderError:
    """The stream ended before the model said it was done: retryable, the partial reply discarded."""
    tail = f" ({detail})" if detail else ""
    return ProviderError(kind="retryable", message=f"{provider}: stream ended before the reply was complete{tail}")


def images_message(results: list, render: Callable[[Any], dict[str, Any]]) -> dict[str, Any] | None:
    """The user message that carries the images a tool round returned (docs/architecture.md section 5: a tool
    result cannot hold an image on every vendor, so images follow the results), or None."""
    content: list[dict[str, Any]] = []
    for r in results:
        if r.images:
            content.append({"type": "text", "text": f"Images returned by {r.name} (call {r.call_id}):"})
            content.extend(render(i) for i in r.images)
    return {"role": "user", "content": content} if content else None


def turns(messages: list) -> Iterator[tuple[str, Any]]:
    """The history as wire turns: ("message", a user/assistant Message) or ("tool_round", the list of
    consecutive tool results) — every vendor sends a round of results together."""
    pending: list = []
    for msg in messages:
        if msg.role == "tool":
            if (result := msg.tool_result_part) is not None:
                pending.append(result)
            continue
        if pending:
            yield "tool_round", pending
            pending = []
        yield "message", msg
    if pending:
        yield "tool_round", pending

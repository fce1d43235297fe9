"""What an OpenAI-compatible SSE stream said that the openai SDK's decoder does not pass on, and
what it must not be handed.

The SDK hands over `data:` events only. Two things the adapter needs are lost on the way:

- an `error:` line: llama.cpp's server (builds through most of 2025) reports a failure after the
  200 as `error: {"code":400,"message":"the request exceeds the available context size…"}` and
  then `data: [DONE]`. The SDK drops the line, so the real cause never reached the user: the reply
  looked cut and was retried six times with "no finish_reason".
- `data: [DONE]` itself: with it, a stream that never sent a `finish_reason` still ended as the
  server meant (it was not cut), so its reply is taken instead of asked for again.

And one thing it chokes on: an event with no data (a gateway's `retry: 3000`, an `id:` alone, an
`event: ping`, an empty `data:` keep-alive) makes the SDK parse "" as JSON and end the stream, so
every request failed as "malformed stream data". Such events carry nothing for the reply and are
not passed on.

A 200 that is no event stream at all (a gateway that ignores `stream`, a `base_url` that hits a
web page, an error sent as JSON with a 200) looked like a stream that said nothing: the tap keeps
the start of such a body so the user reads what came.

`SseTap` wraps the response's byte stream (an httpx response hook puts it there) and passes each
event on whole, as the SDK would dispatch it anyway (no added delay). A content-encoded body (gzip)
is not tapped: the adapter then knows what it knew before.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import AsyncIterator
from typing import Any

from arreio.engine.core.model_io import ProviderError
from arreio.engine.core.nesting import json_loads
from arreio.engine.providers.wire import classify

MAX_ERRORS = 3
HEAD_BOUND = 2048  # what is kept of a body that is not an event stream


class SseTap:
    """An httpx `AsyncByteStream` in front of another: `errors` holds the payloads of `error:` lines,
    `done` says whether `data: [DONE]` came; for a body that is not an event stream, `content_type`
    and `head` (its first bytes) say what it was."""

    def __init__(self, inner: Any, content_type: str = "text/event-stream") -> None:
        self._inner = inner
        self._event = bytearray()  # the event being read, as it came
        self._has_data = False  # it has a data line with something in it
        self._line_at = 0  # where in it the line being read begins
        self.errors: list[str] = []
        self.done = False
        self.content_type = content_type
        self.head = bytearray()

    @property
    def event_stream(self) -> bool:
        return self.content_type.startswith("text/event-stream")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            if passed := self.feed(chunk):
                yield passed
        if self._event:  # a last event with no blank line (llama.cpp's `data: [DONE]`): the SDK decides
            if line := bytes(self._event[self._line_at :]).rstrip(b"\r\n"):
                self._read(line)
            yield bytes(self._event)
            self._event.clear()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def feed(self, chunk: bytes) -> bytes:
        """The bytes to pass on for this chunk: the events it completed that carry data."""
        if not self.event_stream:
            self.head += chunk[: max(0, HEAD_BOUND - len(self.head))]
            return chunk
        out = bytearray()
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            self._event += chunk[start : end + 1]
            start = end + 1
            line = bytes(self._event[self._line_at :]).rstrip(b"\r\n")  # the line may have begun in an earlier chunk
            self._line_at = len(self._event)
            if line:
                self._read(line)
                continue
            if self._has_data:
                out += self._event
            self._event.clear()
            self._line_at, self._has_data = 0, False
        self._event += chunk[start:]
        return bytes(out)

    def _read(self, line: bytes) -> None:
        if line.startswith(b"error:") and len(self.errors) < MAX_ERRORS:
            self.errors.append(line[len(b"error:") :].strip().decode("utf-8", "replace"))
        elif line.startswith(b"data:"):
            payload = line[len(b"data:") :].strip()
            self._has_data = self._has_data or bool(payload)
            self.done = self.done or payload == b"[DONE]"


@functools.cache
def _stream_class(base: type) -> type:
    class TappedStream(SseTap, base):  # the response reads only its own library's AsyncByteStream
        pass

    return TappedStream


async def tap_response(response: Any) -> None:
    """httpx response hook: puts an `SseTap` in front of a successful response's body. The base class
    comes from the response's own library (the openai SDK runs on httpx or on httpx2)."""
    if 200 <= response.status_code < 300 and response.headers.get("content-encoding", "identity") == "identity":
        library = sys.modules[type(response).__module__.split(".")[0]]
        content_type = response.headers.get("content-type", "")
        response.stream = _stream_class(library.AsyncByteStream)(response.stream, content_type)


def tap_of(response: Any) -> SseTap | None:
    """The tap on a response the SDK streamed, or None (a client that was handed in has none)."""
    stream = getattr(response, "stream", None)
    return stream if isinstance(stream, SseTap) else None


# -- what the tap saw, as the reply's end ----------------------------------------------------------


def line_error(text: str, provider: str) -> ProviderError:
    """An SSE `error:` line's payload, classified like any error body (a context overflow is one)."""
    try:
        body: Any = json_loads(text)
    except ValueError:
        body = text
    err = classify(None, body, message=text)
    return err.model_copy(update={"message": f"{provider}: {err.message}"[:500]})


def not_a_stream(
    tap: SseTap, provider: str, hint: str = "is base_url the API's, often ending in /v1?"
) -> ProviderError:
    """A 200 whose body was not an event stream: an error sent as JSON is classified like any error
    body; anything else is named, with its start (a web page where the API was meant to be) and
    `hint` (where the user's base_url may be wrong for this provider)."""
    text = bytes(tap.head).decode("utf-8", "replace").strip()
    try:
        body = json_loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("error"):
        return line_error(text, provider)
    shown = " ".join(text.split())[:200] or "an empty body"
    return ProviderError(
        kind="fatal",
        message=f"{provider}: the server answered {tap.content_type or 'a body'} instead "
        f"of an event stream ({hint}): {shown}",
    )

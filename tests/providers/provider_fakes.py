"""Scripted replies played to the real SDKs, two ways with one interface (`push`, `serve`, `seen`, `got`,
`url`, `transport`):

- `MockWire` (fixture `wire`): an `httpx.MockTransport` under the SDK's client — no socket. Plain SSE
  quirk files and HTTP errors replay here.
- `FakeServer` (fixture `server`): a local HTTP server (127.0.0.1, ephemeral port), for what only a
  connection shows (a stream cut off mid-body: the socket closed before the chunked terminator) and
  for whole runs, whose clients find it by `base_url`.

Each request pops the next `Reply`: a raw SSE fixture streamed in chunks, a JSON error with any
status and headers, or (`FakeServer` only) a cut stream. Requests are recorded (path, headers, JSON
body) so tests can check what the adapters sent. A provider made with `transport=fake.transport` talks
to either (`FakeServer.transport` is None: the real network to its `url`).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import socket
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

SSE_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "sse"


def sse(provider: str, quirk: str) -> bytes:
    return (SSE_DIR / provider / f"{quirk}.sse").read_bytes()


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    cut_after: int | None = None  # bytes of body sent before the connection is dropped
    chunk_bytes: int | None = None  # send the body in pieces of this many bytes (a UTF-8 character split too)

    @classmethod
    def stream(cls, provider: str, quirk: str) -> Reply:
        return cls(body=sse(provider, quirk))

    @classmethod
    def error(cls, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
        return cls(
            status=status, body=json.dumps(body).encode(), headers=headers or {}, content_type="application/json"
        )


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeServer:
    transport = None  # the SDK's own: the real network, to `url`

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.seen: list[Seen] = []
        self.gets: dict[str, Reply] = {}  # GET path (query string aside) -> its reply; any other GET: 404
        self.got: list[str] = []  # the GET paths asked, in order
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                server.got.append(path)
                reply = server.gets.get(path) or Reply.error(404, {"error": "not found"})
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(reply.body)))
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(reply.body)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode(errors="replace")}
                server.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                reply = (
                    server.replies.popleft()
                    if server.replies
                    else Reply.error(500, {"error": {"type": "api_error", "message": "no scripted reply left"}})
                )
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("connection", "close")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                if reply.content_type != "text/event-stream":
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                body_bytes = reply.body if reply.cut_after is None else reply.body[: reply.cut_after]
                if reply.chunk_bytes:
                    step = reply.chunk_bytes
                    for start in range(0, len(body_bytes), step):
                        self._chunk(body_bytes[start : start + step])
                    self.wfile.write(b"0\r\n\r\n")
                    return
                for event in body_bytes.split(b"\n\n")[:-1]:  # one chunk per event
                    self._chunk(event + b"\n\n")
                if tail := body_bytes.split(b"\n\n")[-1]:
                    self._chunk(tail)  # half an event, when the reply is cut inside one
                if reply.cut_after is not None:
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)  # no terminating chunk: a cut
                    self.close_connection = True
                    return
                self.wfile.write(b"0\r\n\r\n")

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def serve(self, path: str, body: dict[str, Any], status: int = 200) -> FakeServer:
        """Answer GET `path` with `body` as JSON (a server's /v1/models, /props, /api/ps)."""
        self.gets[path] = Reply.error(status, body)
        return self

    def push(self, *replies: Reply) -> FakeServer:
        self.replies.extend(replies)
        return self

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def sdk_httpx() -> Any:
    """The httpx the SDKs build on (`httpx2` in newer releases, which refuse `httpx` objects)."""
    import openai

    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.partition(".")[0])


class MockWire:
    """`FakeServer`'s replies through an `httpx.MockTransport`: the same SSE chunks (one per event),
    errors and recorded requests, without a socket. A cut stream is a connection's quirk: `FakeServer`."""

    url = "http://wire.test"

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.seen: list[Seen] = []
        self.gets: dict[str, Reply] = {}
        self.got: list[str] = []
        self.transport = sdk_httpx().MockTransport(self._answer)

    serve = FakeServer.serve
    push = FakeServer.push

    def _answer(self, request: Any) -> Any:
        httpx = sdk_httpx()
        path = request.url.raw_path.decode()
        if request.method == "GET":
            self.got.append(path.split("?", 1)[0])
            reply = self.gets.get(path.split("?", 1)[0]) or Reply.error(404, {"error": "not found"})
        else:
            raw = request.read()
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_raw": raw.decode(errors="replace")}
            self.seen.append(Seen(path, {k.lower(): v for k, v in request.headers.items()}, body))
            reply = (
                self.replies.popleft()
                if self.replies
                else Reply.error(500, {"error": {"type": "api_error", "message": "no scripted reply left"}})
            )
        assert reply.cut_after is None, "a stream cut is a connection-level quirk: replay it with `server`"
        headers = {"content-type": reply.content_type, **reply.headers}
        if reply.content_type != "text/event-stream":
            headers["content-length"] = str(len(reply.body))
        # Streamed, as off a socket: unread when the SDK's response hooks (the SSE tap) see it.
        return httpx.Response(reply.status, headers=headers, stream=_Chunks(httpx, reply))


def _chunks(reply: Reply) -> list[bytes]:
    """The body as `FakeServer` sends it: in pieces of `chunk_bytes`, else one chunk per event."""
    body = reply.body
    if reply.content_type != "text/event-stream":
        return [body]
    if reply.chunk_bytes:
        return [body[i : i + reply.chunk_bytes] for i in range(0, len(body), reply.chunk_bytes)]
    events = [event + b"\n\n" for event in body.split(b"\n\n")[:-1]]
    return events + ([tail] if (tail := body.split(b"\n\n")[-1]) else [])


def _Chunks(httpx: Any, reply: Reply) -> Any:  # noqa: N802 - builds a stream class of the SDK's httpx
    class Chunks(httpx.AsyncByteStream):
        async def __aiter__(self):
            for piece in _chunks(reply):
                yield piece

    return Chunks()


def collect(provider: Any, request: Any) -> list[Any]:
    """Every event of one `stream` call, run to completion on a fresh event loop."""

    async def go() -> list[Any]:
        return [event async for event in provider.stream(request)]

    return asyncio.run(go())


@pytest.fixture
def wire():
    """A `MockWire`: replies through an `httpx.MockTransport` (imported by the conftests that need it)."""
    return MockWire()


@pytest.fixture
def server():
    """A started `FakeServer`, stopped after the test (imported by the conftests that need it)."""
    fake = FakeServer()
    fake.start()
    yield fake
    fake.stop()

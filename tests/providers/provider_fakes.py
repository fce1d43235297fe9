"""A local HTTP server (127.0.0.1, ephemeral port) that plays scripted replies to the real SDKs.

Each request pops the next `Reply`: a raw SSE fixture streamed in chunks, a JSON error with any
status and headers, or a stream cut off mid-body (the socket closed before the chunked terminator).
Requests are recorded (path, headers, JSON body) so tests can check what the adapters sent.
"""

from __future__ import annotations

import asyncio
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
        return cls(status=status, body=json.dumps(body).encode(), headers=headers or {}, content_type="application/json")


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeServer:
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
                reply = server.replies.popleft() if server.replies else Reply.error(
                    500, {"error": {"type": "api_error", "message": "no scripted reply left"}}
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
                        self._chunk(body_bytes[start:start + step])
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


def collect(provider: Any, request: Any) -> list[Any]:
    """Every event of one `stream` call, run to completion on a fresh event loop."""

    async def go() -> list[Any]:
        return [event async for event in provider.stream(request)]

    return asyncio.run(go())


@pytest.fixture
def server():
    """A started `FakeServer`, stopped after the test (imported by the conftests that need it)."""
    fake = FakeServer()
    fake.start()
    yield fake
    fake.stop()

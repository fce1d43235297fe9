"""Shared wiring for the tool-family tests: the fixture MCP server's config, a RunContext, a local
HTTP server (127.0.0.1 only) and a tiny PDF writer."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from arreio.engine.core.config import Settings
from arreio.engine.providers.testing import FixedClock
from arreio.engine.tools.run_context import RunContext
from tests.conftest import REPO, isolate

MCP_SERVER = REPO / "fixtures" / "mcp" / "wire_server.py"  # the wire format itself, stdlib only: ~0.03 s to start
MCP_SDK_SERVER = REPO / "fixtures" / "mcp" / "server.py"  # the same tools on the official `mcp` SDK


def fixture_server(*, sdk: bool = False, **extra) -> dict:
    """A `mcp_servers` entry that starts the fixture server with this interpreter: the stdlib one, or
    with `sdk=True` the one written with the official SDK, for what must hold against it too. The SDK
    one may take two minutes to start (importing `mcp` on a busy machine took longer than the default
    30 s): a wait, not a bound, for the tests that are not about start-up time."""
    server = MCP_SDK_SERVER if sdk else MCP_SERVER
    return {"command": sys.executable, "args": [str(server)], "connect_timeout_s": 120, **extra}


def run_context(tmp_path: Path, **settings) -> RunContext:
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    return RunContext(
        cwd=work,
        state_dir=work / ".arreio",
        settings=Settings(**settings),
        clock=FixedClock(),
        env={"PATH": "/usr/bin:/bin"},
    )


def make_pdf(pages: list[str]) -> bytes:
    """A minimal valid PDF with one line of Helvetica text per page (offsets computed, xref exact)."""
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, text in enumerate(pages):
        stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 3 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


Route = Callable[[BaseHTTPRequestHandler], None]


class LocalServer:
    """A threaded HTTP server on 127.0.0.1 with routes by path; `requests` records what was asked."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append((self.path, dict(self.headers)))
                route = outer.routes.get(self.path.split("?")[0])
                if route is None:
                    self.send_error(404)
                    return
                route(self)

            def log_message(self, *args) -> None:  # keep test output clean
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def reply(
    status: int, body: bytes | str = b"", ctype: str = "text/html; charset=utf-8", headers: dict | None = None
) -> Route:
    data = body.encode() if isinstance(body, str) else body

    def route(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            h.send_header(key, value)
        h.end_headers()
        h.wfile.write(data)

    return route


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    server = LocalServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working directory (HOME isolated) with a goal file; write `.arreio/config.yaml` with `configure`."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "GOAL.md").write_text("# Use the tools\n\nDo what the script says.\n", encoding="utf-8")
    isolate(monkeypatch, tmp_path / "home", work)
    return work


def configure(work: Path, config: dict) -> None:
    import json

    (work / ".arreio").mkdir(exist_ok=True)
    # JSON is YAML: no quoting surprises for paths and commands
    (work / ".arreio" / "config.yaml").write_text(json.dumps(config), encoding="utf-8")


def script(work: Path, replies: list[dict]) -> str:
    import json

    (work / "script.json").write_text(json.dumps(replies), encoding="utf-8")
    return "script.json"

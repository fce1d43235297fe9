"""A loopback proxy in front of llama-server that asks it not to parse tool calls
(`parse_tool_calls: false` on each chat request): the model's `<tool_call>{…}</tool_call>` then reaches
the client as plain content — what a server without a tool-call parser for the model (an Ollama
template, an older llama.cpp, a proxy) hands over. Everything else passes through as it came."""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self
from urllib.parse import urlsplit


class NoParseProxy:
    def __init__(self, upstream: str) -> None:
        """`upstream`: the server's base URL (with or without /v1)."""
        parts = urlsplit(upstream)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        self.requests: list[dict] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.endswith("/chat/completions"):
                    request = json.loads(body)
                    request["parse_tool_calls"] = False
                    proxy.requests.append(request)
                    body = json.dumps(request).encode()
                self._forward(body)

            def _forward(self, body: bytes | None) -> None:
                upstream_conn = http.client.HTTPConnection(host, port, timeout=600)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                if body is not None:
                    headers["Content-Length"] = str(len(body))
                upstream_conn.request(self.command, self.path, body=body, headers=headers)
                reply = upstream_conn.getresponse()
                self.send_response(reply.status)
                for key, value in reply.getheaders():
                    if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(key, value)
                self.send_header("Connection", "close")
                self.end_headers()
                while chunk := reply.read1(65536):
                    self.wfile.write(chunk)
                    self.wfile.flush()
                upstream_conn.close()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

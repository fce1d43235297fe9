"""Real exfiltration targets on the host, and a watch on the FIFOs an attack plants.

`Listeners` opens, on the host: an HTTP server on every IPv4 address (0.0.0.0) and one on ::1, a UDP
socket on 127.0.0.1, an abstract unix socket, and filesystem unix sockets at paths the test names.
Each records every byte it receives; an attempt holds when none received anything.

`FifoWatch` probes each named FIFO: when a reader has it open and still holds it open a moment later,
that reader is blocked on it — the sandboxed shell call that made it is long over, so only host code
(arreio, or a git it started) can be that reader. The probe then feeds it a line and closes, so the
hang ends and the test can report it instead of timing out.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Self


class _Recorder(BaseHTTPRequestHandler):
    def _any(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.got.append(f"{self.command} {self.path} {body[:200]!r}".encode())  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    do_GET = do_POST = do_PUT = do_HEAD = _any

    def log_message(self, *args: object) -> None:
        pass


class _V6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class Listeners:
    """Start with `with Listeners(unix_paths=[...]) as ears:`; read `ears.received()` after the run."""

    def __init__(self, unix_paths: Iterable[Path] = ()) -> None:
        self.unix_paths = list(unix_paths)
        self.abstract = f"arreio-attack-{uuid.uuid4().hex[:12]}"
        self._got: dict[str, list[bytes]] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._closers: list = []

    # -- addresses the payloads use -------------------------------------------------------------------
    http_port = udp_port = v6_port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/"

    @staticmethod
    def host_ip() -> str:
        """This machine's address on its way out (not loopback); 127.0.0.1 when there is none."""
        with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            return probe.getsockname()[0]
        return "127.0.0.1"

    def received(self) -> dict[str, list[bytes]]:
        return {name: got for name, got in self._got.items() if got}

    # -- life ---------------------------------------------------------------------------------------
    def __enter__(self) -> Self:
        http = ThreadingHTTPServer(("0.0.0.0", 0), _Recorder)
        http.got = self._got.setdefault("http", [])  # type: ignore[attr-defined]
        self.http_port = http.server_address[1]
        self._serve(http)
        with contextlib.suppress(OSError):
            v6 = _V6Server(("::1", 0), _Recorder)
            v6.got = self._got.setdefault("http-ipv6", [])  # type: ignore[attr-defined]
            self.v6_port = v6.server_address[1]
            self._serve(v6)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        self.udp_port = udp.getsockname()[1]
        self._datagrams(udp, "udp")
        abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        abstract.bind("\0" + self.abstract)
        self._stream(abstract, "abstract-unix")
        for path in self.unix_paths:
            path.parent.mkdir(parents=True, exist_ok=True)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(str(path))
            self._stream(sock, f"unix:{path.name}")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for close in self._closers:
            with contextlib.suppress(Exception):
                close()
        for thread in self._threads:
            thread.join(timeout=5)

    def _serve(self, server: ThreadingHTTPServer) -> None:
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        thread.start()
        self._threads.append(thread)
        self._closers += [server.shutdown, server.server_close]

    def _datagrams(self, sock: socket.socket, name: str) -> None:
        got = self._got.setdefault(name, [])
        sock.settimeout(0.1)

        def loop() -> None:
            while not self._stop.is_set():
                with contextlib.suppress(OSError):
                    got.append(sock.recv(65536))

        self._start(loop, sock)

    def _stream(self, sock: socket.socket, name: str) -> None:
        got = self._got.setdefault(name, [])
        sock.listen(16)
        sock.settimeout(0.1)

        def loop() -> None:
            while not self._stop.is_set():
                try:
                    conn, _ = sock.accept()
                except OSError:
                    continue
                got.append(b"<connected>")
                conn.settimeout(1.0)
                with contextlib.suppress(OSError), conn:
                    while data := conn.recv(65536):
                        got.append(data)

        self._start(loop, sock)

    def _start(self, loop, sock: socket.socket) -> None:
        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        self._threads.append(thread)
        self._closers.append(sock.close)


class FifoWatch:
    """`with FifoWatch([paths]) as watch:` … `watch.blocked` names each FIFO a host process blocked on:
    reading it, or (`writers=True`) writing into it. The two probes exclude each other: the writers'
    probe holds the FIFO open for reading, which the readers' probe would take for a blocked reader."""

    HELD_S = 0.4  # a reader still there this long after the probe found it is blocked, not peeking

    def __init__(self, paths: Iterable[Path], *, writers: bool = False) -> None:
        self.paths = list(paths)
        self.writers = writers
        self.blocked: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            for path in self.paths:
                if not path.is_fifo():
                    continue
                if self.writers:
                    self._probe_writer(path)
                else:
                    self._probe_reader(path)

    def _probe_reader(self, path: Path) -> None:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            if error.errno not in (errno.ENXIO, errno.ENOENT):
                raise
            return  # nobody reads it
        try:
            time.sleep(self.HELD_S)
            os.write(fd, b"fifo-watch\n")  # EPIPE when the reader has gone: it only peeked
            self.blocked.add(f"{path.name} (read)")
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)

    def _probe_writer(self, path: Path) -> None:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            deadline = time.monotonic() + self.HELD_S
            while time.monotonic() < deadline:
                with contextlib.suppress(BlockingIOError):
                    if os.read(fd, 65536):
                        self.blocked.add(f"{path.name} (write)")
                        break
                time.sleep(0.05)
        finally:
            os.close(fd)

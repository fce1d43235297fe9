"""`arreio sessions export` and `arreio sessions search` end to end, and the HTML export in a real
headless Chromium: it renders (a screenshot with the page's colours and text) and loads nothing."""

from __future__ import annotations

import http.server
import json
import shutil
import struct
import subprocess
import threading
import zlib
from pathlib import Path

import pytest

from arreio.engine.core.messages import Message, ToolResultPart

GOAL = "fixtures/goals/quickstart.md"
LEAK = "http://leak.arreio-test.invalid"


def _run(cli) -> str:
    return json.loads(cli("run", "--goal", GOAL, "--offline", "--json").stdout.splitlines()[0])["session_id"]


def test_export_each_format_to_stdout_and_to_a_file(workdir: Path, cli) -> None:
    sid = _run(cli)
    md = cli("sessions", "export", sid[:8]).stdout
    assert md.startswith("# Quickstart: summarise the project notes")
    assert md.index("**Tool call** `list_dir`") < md.index(".arreio/ (contents not listed)")  # result under call
    data = json.loads(cli("sessions", "export", sid, "--format", "json").stdout)
    assert data["header"]["id"] == sid and len(data["messages"]) == 9
    written = cli("sessions", "export", sid, "-f", "html", "-o", "t.html")
    assert written.exit_code == 0 and (workdir / "t.html").read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    "args, said",
    [
        (["--format", "pdf"], "choose one of md, html, json"),
        (["-o", "missing/t.md"], "does not exist"),
        (["-o", "."], "is a folder"),
    ],
)
def test_export_bad_input_is_one_line_and_exit_2(workdir: Path, cli, args: list[str], said: str) -> None:
    sid = _run(cli)
    result = cli("sessions", "export", sid, *args)
    assert result.exit_code == 2 and said in result.stderr and "Traceback" not in result.stderr


def test_search_finds_lines_newest_first_with_role_and_here(
    workdir: Path, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "no line matches" in cli("sessions", "search", "billing").stdout  # no sessions: none made
    assert not (workdir / ".arreio").exists()
    first, second = _run(cli), _run(cli)
    out = cli("sessions", "search", "billing export", "--role", "tool").stdout.splitlines()
    assert out and out[0].startswith(second) and all(" tool " in line for line in out)
    assert "billing export" in out[0].lower()
    rows = json.loads(cli("sessions", "search", "quickstart", "--role", "user", "--json").stdout)
    assert list(dict.fromkeys(r["session_id"] for r in rows)) == [second, first] and rows[0]["role"] == "user"
    assert (workdir / ".arreio" / "search.sqlite").is_file()
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    monkeypatch.setenv("ARREIO_HOME", str(workdir / ".arreio"))  # the same sessions, seen from another folder
    assert json.loads(cli("sessions", "search", "quickstart", "--here", "--json").stdout) == []
    assert len(json.loads(cli("sessions", "search", "quickstart", "--json").stdout)) >= 2
    bad = cli("sessions", "search", "x", "--role", "system")
    assert bad.exit_code == 2 and "choose one of user, assistant, tool" in bad.stderr


# -- the HTML page in a real browser ----------------------------------------------------------------
def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("no Chromium here (Debian: apt-get install chromium)")
    return found


class _Proxy(http.server.BaseHTTPRequestHandler):
    """Every request the browser makes goes through here: what the page tried to load is seen."""

    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        self.seen.append(self.path)
        self.send_response(404)
        self.end_headers()

    do_CONNECT = do_HEAD = do_POST = do_GET  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


def _open_in_chromium(page: Path, shot: Path) -> list[str]:
    """Render `page` headless to a screenshot; returns the requests it made for the test's host."""
    _Proxy.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        subprocess.run(
            [
                _chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                f"--proxy-server=http://127.0.0.1:{server.server_address[1]}",
                "--proxy-bypass-list=<-loopback>",
                f"--user-data-dir={shot.parent / 'profile'}",
                "--window-size=1000,900",
                f"--screenshot={shot}",
                page.as_uri(),
            ],
            capture_output=True,
            timeout=110,
            check=True,
        )
    finally:
        server.shutdown()
        server.server_close()
    return [p for p in _Proxy.seen if "arreio-test.invalid" in p]


def _pixels(png: Path) -> tuple[int, int, set[tuple[int, int, int]]]:
    """(width, height, the colours) of an 8-bit RGB/RGBA PNG, decoded here (no imaging library)."""
    data, pos, chunks = png.read_bytes(), 8, {}
    idat = b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        chunks[kind] = body
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert depth == 8 and colour in (2, 6)
    bpp = 4 if colour == 6 else 3
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    colours = {tuple(row[x : x + 3]) for row in rows for x in range(0, stride, bpp * 4)}
    return width, height, colours


@pytest.mark.slow
def test_the_html_export_renders_in_chromium_and_fetches_nothing(workdir: Path, cli, tmp_path: Path) -> None:
    _chromium()
    sid = _run(cli)
    from arreio.engine.session.file import Session

    path = workdir / ".arreio" / "sessions" / f"{sid}.jsonl"
    session, _ = Session.open(path)
    # what a naive page would load: markup in a tool result and a Markdown image in the answer
    session.append(Message.user(f"see ![chart]({LEAK}/md.png)"))
    session.append(
        Message.tool_result(
            ToolResultPart(
                call_id="gone",
                name="shell",
                content=(
                    f'<img src="{LEAK}/img.png"><link rel="stylesheet" href="{LEAK}/x.css">'
                    f'<script src="{LEAK}/x.js"></script><iframe src="{LEAK}/frame"></iframe>'
                ),
            )
        )
    )
    session.close()
    assert cli("sessions", "export", sid, "-f", "html", "-o", "page.html").exit_code == 0
    shot = tmp_path / "page.png"
    assert _open_in_chromium(workdir / "page.html", shot) == []  # nothing the session holds was loaded
    width, height, colours = _pixels(shot)
    assert (width, height) == (1000, 900)
    assert (221, 244, 255) in colours  # the user's turn, in its colour: the style applied
    assert any(max(c) < 80 for c in colours) and len(colours) > 20  # dark text on a light page, drawn
    # the harness sees a fetch when there is one: the same markup as a page of its own is loaded
    control = tmp_path / "control.html"
    control.write_text(f'<html><body><img src="{LEAK}/img.png"><p>control</p></body></html>')
    assert _open_in_chromium(control, tmp_path / "control.png") != []

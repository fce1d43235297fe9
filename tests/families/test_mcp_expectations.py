"""MCP as Claude Code and Codex users expect it, against REAL servers: the fixture server
(fixtures/mcp/wire_server.py, misbehaving on demand through env vars) as a subprocess, a loopback HTTP
server answering 401/403 (in front of the SDK fixture server, fixtures/mcp/server.py, over streamable
HTTP), and `arreio run` as a real subprocess wherever stderr must be the real one.

- naming the tools of a server that did not start (`--no-tools 'fx__*'`, `tools_disabled`) is a
  warning, not exit 5; a typo in a live server's namespace still is a config error
- a server printing junk on stdout, or missing `connect_timeout_s`, leaves stderr clean; the SDK's
  lines go to the server's log
- HTTP 401/403 says "authentication failed (401) for server X — check its headers"
- a dead server's tools are withdrawn from later requests; the model is told once, in the result
- per-server `tools: {allow, deny}`; unknown names warned with did-you-mean
- repeat limits follow readOnlyHint: reads count afresh after a write; writes count over the run
- `arreio mcp list --json` shows each tool's description and input schema
- "connecting to N MCP servers…" on a terminal's stderr only
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from arreio.engine.providers.testing import FixedClock, ScriptedProvider, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from arreio.engine.tools.mcp.config import parse_mcp_servers
from arreio.engine.tools.mcp.hub import McpHub
from tests.families.conftest import configure, fixture_server, script

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # real MCP server processes

GOAL = ["--goal", "GOAL.md", "--json", "--yes"]


def events_of(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def ends_of(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "tool_end"]


def warnings_of(events: list[dict]) -> list[str]:
    return [e["message"] for e in events if e["type"] == "warning"]


def run_arreio(project: Path, env: dict, cmd: list[str], args: list[str], **popen) -> subprocess.CompletedProcess:
    return subprocess.run(cmd + args, cwd=project, env=env, capture_output=True, text=True, timeout=60, **popen)


# -- naming tools of a server that is not up --------------------------------------------------------
def test_disabling_the_tools_of_a_server_that_failed_to_start_is_a_warning(project: Path, cli) -> None:
    configure(
        project,
        {
            "mcp_servers": {
                "fx": fixture_server(env={"FIXTURE_MCP_FAIL_START": "1"}),
                "off": fixture_server(enabled=False),
            },
            "tools_disabled": ["fx__crash"],
        },
    )
    replies = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "GOAL.md"}}]}, {"text": "read it"}]
    # (`--no-tools 'fx__*'` would exclude every tool of fx: it is then not started at all, and says nothing)
    result = cli(
        "run", *GOAL, "--script", script(project, replies), "--no-tools", "fx__add", "--tools", "off__*,fx__*,read_file"
    )
    assert result.exit_code == 0, result.output
    warnings = warnings_of(events_of(result.stdout))
    assert any("tool(s) fx__add not offered in this run: MCP server 'fx' failed to start" in w for w in warnings)
    assert any("tool(s) fx__crash not offered" in w for w in warnings)  # the config entry too
    assert any("tool(s) off__* not offered in this run: MCP server 'off' is disabled" in w for w in warnings)


def test_a_typo_in_a_live_servers_namespace_is_still_an_error(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"fx": fixture_server()}})
    result = cli("run", *GOAL, "--offline", "--no-tools", "fx__ad")  # on the command line: bad usage
    assert result.exit_code == 2 and "unknown tool(s) fx__ad (did you mean 'fx__add'?)" in result.stderr


# -- stderr stays clean ------------------------------------------------------------------------------
def test_junk_on_stdout_goes_to_the_servers_log_not_the_terminal(project: Path, arreio_env, arreio_cmd) -> None:
    configure(project, {"mcp_servers": {"fx": fixture_server(env={"FIXTURE_MCP_JUNK": "250"})}})
    replies = [{"tool_calls": [{"name": "fx__add", "arguments": {"a": 2, "b": 3}}]}, {"text": "five"}]
    done = run_arreio(project, arreio_env, arreio_cmd, ["run", *GOAL, "--script", script(project, replies)])
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # was: a traceback per junk line
    assert ends_of(events_of(done.stdout))[0]["preview"] == "5"  # the server works despite the noise
    log = (project / ".arreio" / "logs" / "mcp-fx.log").read_text()
    assert "ignored a stdout line that is not MCP: 'fixture junk line 0: this is not JSON-RPC'" in log
    assert log.count("ignored a stdout line") == 200 and "50 more non-MCP stdout line(s)" in log
    assert "Traceback" not in log


def test_a_missed_connect_timeout_leaves_no_noise(project: Path, arreio_env, arreio_cmd) -> None:
    configure(project, {"mcp_servers": {"slow": fixture_server(env={"FIXTURE_MCP_HANG": "1"}, connect_timeout_s=2)}})
    replies = [{"text": "nothing to do"}]
    done = run_arreio(project, arreio_env, arreio_cmd, ["run", *GOAL, "--script", script(project, replies)])
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # was: "Future exception was never retrieved … CancelledError"
    warning = warnings_of(events_of(done.stdout))[0]
    # (on a loaded machine the server may still be importing when the timeout fires: no stderr tail then)
    assert warning.startswith("MCP server 'slow' failed to start: did not answer within 2s")


def test_sdk_records_outside_a_connection_still_reach_stderr_as_before(arreio_env) -> None:
    # a real interpreter: pytest's own logging handlers would hide what plain Python does
    code = (
        "import logging; from arreio.engine.tools.mcp import logs; logs.route_sdk_logging(); "
        "logging.getLogger('mcp.client.stdio').warning('not about a connection'); "
        "logging.getLogger('mcp').info('below the default level')"
    )
    done = subprocess.run([sys.executable, "-c", code], env=arreio_env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stderr == "not about a connection\n"


def test_a_server_that_fails_after_junk_says_so(tmp_path: Path) -> None:
    junk_then_fail = fixture_server(env={"FIXTURE_MCP_JUNK": "3", "FIXTURE_MCP_FAIL_START": "1"})
    hub = McpHub(
        parse_mcp_servers({"fx": junk_then_fail}),
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", "")},
        log_dir=tmp_path / ".arreio" / "logs",
    )
    hub.start()
    try:
        detail = hub.states()[0].detail
        assert "printed 3 line(s) on stdout that are not MCP (see .arreio/logs/mcp-fx.log)" in detail
        assert "its stderr ends: fixture: missing API token" in detail and "arreio: mcp sdk" not in detail
    finally:
        hub.close()


# -- HTTP authentication -----------------------------------------------------------------------------
class _Gate:
    """A loopback HTTP server in front of a remote MCP server: it forwards every request to `upstream`
    until `refuse` is set, then answers that status — what a remote server does when the token in the
    configured headers is wrong, expired or lacks a scope. With no upstream it refuses from the start."""

    def __init__(self, refuse: int | None = None, upstream: str | None = None) -> None:
        self.refuse = refuse
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if outer.refuse is not None or upstream is None:
                    self._send(
                        outer.refuse or 401,
                        b'{"error": "invalid_token"}',
                        {"Content-Type": "application/json", "WWW-Authenticate": 'Bearer error="invalid_token"'},
                    )
                elif self.command == "GET" or b'"subscriptions/listen"' in body:  # it buffers, so no
                    self._send(405, b"", {})  # server-initiated stream through the gate (the client copes)
                else:
                    self._forward(body)

            def _forward(self, body: bytes) -> None:
                import urllib.error
                import urllib.request

                skip = ("host", "content-length", "connection")
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                request = urllib.request.Request(
                    upstream + self.path, data=body or None, method=self.command, headers=headers
                )
                try:
                    with urllib.request.urlopen(request, timeout=20) as response:
                        status, data, got = response.status, response.read(), response.headers
                except urllib.error.HTTPError as error:
                    status, data, got = error.code, error.read(), error.headers
                keep = {k: v for k, v in got.items() if k.lower() in ("content-type", "mcp-session-id")}
                self._send(status, data, keep)

            def _send(self, status: int, data: bytes, headers: dict) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_GET = do_DELETE = _answer

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/mcp"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def http_fixture_server() -> Iterator[str]:
    """The SDK fixture server speaking streamable HTTP on a free loopback port; yields its base URL."""
    import socket
    import time

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "FIXTURE_MCP_HTTP_PORT": str(port)}
    proc = subprocess.Popen(
        [sys.executable, fixture_server(sdk=True)["args"][0]],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("status", [401, 403])
def test_http_auth_failure_says_check_its_headers(tmp_path: Path, status: int) -> None:
    refusing = _Gate(status)
    servers = parse_mcp_servers({"remote": {"url": refusing.url, "headers": {"Authorization": "Bearer ${TOKEN}"}}})
    hub = McpHub(servers, cwd=tmp_path, env={"TOKEN": "expired"}, log_dir=tmp_path / "logs")
    try:
        hub.start()
        state = hub.states()[0]
        assert state.state == "failed" and hub.tools() == []
        expected = (
            f"authentication failed ({status}) for server remote — check its headers (mcp_servers.remote.headers)"
        )
        assert state.detail == expected
        assert hub.drain_warnings() == [expected + "; its tools are not available"]
    finally:
        hub.close()
        refusing.close()


def test_mcp_test_reports_the_auth_failure(project: Path, cli) -> None:
    refusing = _Gate(401)
    try:
        configure(project, {"mcp_servers": {"remote": {"url": refusing.url}}})
        result = cli("mcp", "test", "remote")
        assert result.exit_code == 1
        assert "authentication failed (401) for server remote — check its headers" in result.stderr
    finally:
        refusing.close()


def test_a_401_mid_run_fails_the_call_with_the_same_advice(tmp_path: Path, http_fixture_server: str) -> None:
    from arreio.engine.tools.chain import run_tool
    from arreio.engine.tools.registry import ToolRegistry
    from arreio.engine.tools.run_context import RunContext

    gate = _Gate(upstream=http_fixture_server)
    hub = McpHub(parse_mcp_servers({"remote": {"url": gate.url}}), cwd=tmp_path, env={}, log_dir=tmp_path / "logs")
    try:
        hub.start()
        assert hub.states()[0].state == "ready", hub.states()[0].detail
        registry, ctx = ToolRegistry(hub.tools()), RunContext(cwd=tmp_path)
        assert asyncio.run(run_tool(registry, "remote__add", {"a": 1, "b": 2}, ctx)).content == "3"
        gate.refuse = 401  # the token expired
        refused = asyncio.run(run_tool(registry, "remote__add", {"a": 1, "b": 2}, ctx))
        assert refused.is_error
        assert "authentication failed (401) for server remote — check its headers" in refused.content
    finally:
        hub.close()
        gate.close()


# -- a server that dies mid-run ----------------------------------------------------------------------
def _pipeline(work: Path, replies: list[dict], config: dict) -> tuple[list, ScriptedProvider]:
    configure(work, config)
    provider = ScriptedProvider(replies)
    deps = PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(provider))
    options = RunOptions(
        goal_text="# go\n", cwd=work, env={"PATH": os.environ.get("PATH", ""), "HOME": str(work)}, yes=True
    )
    return asyncio.run(run_to_end(options, deps)), provider


def test_a_dead_servers_tools_are_withdrawn_and_the_model_is_told_once(project: Path) -> None:
    replies = [
        {"tool_calls": [{"name": "fx__crash"}]},  # the first death: restarted, tools stay
        {"tool_calls": [{"name": "fx__crash", "arguments": {"last_words": "segfault in handler"}}]},
        {"tool_calls": [{"name": "fx__add", "arguments": {"a": 1, "b": 1}}]},  # the model insists
        {"text": "the server is gone"},
    ]
    events, provider = _pipeline(project, replies, {"mcp_servers": {"fx": fixture_server(), "ok": fixture_server()}})
    offered = [{t.name for t in r.tools} for r in provider.requests]
    assert "fx__add" in offered[0] and "ok__add" in offered[0]
    assert "fx__add" in offered[1]  # restarted
    assert not any(n.startswith("fx__") for n in offered[2] | offered[3]) and "ok__add" in offered[2]
    _, crash, again = [e for e in events if e.type == "tool_end"]
    result = provider.requests[2].messages[-1].parts[0].content
    assert crash.is_error and "MCP server 'fx' stopped during the call" in result
    assert "withdrawn for the rest of this run — do not call them again" in result and "fx__add" in result
    assert again.is_error and "withdrawn earlier in this run" in again.preview  # short the second time
    mcp = [e.message for e in events if e.type == "warning" and e.code == "mcp"]
    assert len(mcp) == 2 and "restarting it" in mcp[0]
    assert "stopped again mid-run" in mcp[1] and "segfault in handler" in mcp[1]


# -- per-server allow / deny -------------------------------------------------------------------------
def test_per_server_deny_and_allow_with_globs_and_did_you_mean(project: Path, cli) -> None:
    configure(
        project,
        {
            "mcp_servers": {
                "fx": fixture_server(tools={"deny": ["crash", "sl*", "stauts"]}),
                "only": fixture_server(tools={"allow": ["add", "ech?"]}),
            }
        },
    )
    replies = [{"tool_calls": [{"name": "fx__status"}]}, {"text": "ok"}]
    result = cli("run", *GOAL, "--script", script(project, replies), "--tools", "fx__*,only__*,fx__crash")
    assert result.exit_code == 0, result.output
    events = events_of(result.stdout)
    warnings = warnings_of(events)
    assert any(
        "mcp_servers.fx.tools.deny names 'stauts', which server 'fx' does not offer; did you mean status?" in w
        for w in warnings
    )
    assert "tool fx__crash is not offered in this run: in its server's tools.deny (mcp_servers.fx.tools)" in warnings
    listing = cli("mcp", "list", "--json")
    rows = {r["name"]: r for r in json.loads(listing.stdout)["servers"]}
    offered = {s: sorted(t["name"] for t in rows[s]["tools"] if t["offered"]) for s in rows}
    assert "fx__crash" not in offered["fx"] and "fx__slow" not in offered["fx"] and "fx__add" in offered["fx"]
    assert offered["only"] == ["only__add", "only__echo"]
    crash = next(t for t in rows["fx"]["tools"] if t["name"] == "fx__crash")
    assert crash["withheld"] == "in its server's tools.deny (mcp_servers.fx.tools)"


def test_mcp_list_json_shows_descriptions_and_input_schemas(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"fx": fixture_server()}})
    result = cli("mcp", "list", "--json")
    assert result.exit_code == 0, result.output
    tools = {t["name"]: t for t in json.loads(result.stdout)["servers"][0]["tools"]}
    add = tools["fx__add"]
    assert add["description"] == "Add two integers." and add["server_name"] == "add"
    assert add["input_schema"]["required"] == ["a", "b"] and add["input_schema"]["properties"]["a"]["type"] == "integer"
    assert tools["fx__status"]["read_only"] is True and add["read_only"] is False


# -- repeat limits follow the annotations ------------------------------------------------------------
def _calls(*names_args: tuple[str, dict]) -> list[dict]:
    return [{"tool_calls": [{"name": n, "arguments": a}]} for n, a in names_args]


def test_reads_count_afresh_after_a_write(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"git": fixture_server()}})
    status, stage = ("git__status", {}), ("git__stage", {"path": "a.txt"})
    # four identical statuses would be a loop (limit 3); a write in between makes them fresh reads
    replies = [*_calls(status, stage, status, status, status, ("git__stage", {"path": "b"}), status), {"text": "done"}]
    result = cli("run", *GOAL, "--script", script(project, replies))
    assert result.exit_code == 0, result.output
    ends = ends_of(events_of(result.stdout))
    assert [e["is_error"] for e in ends] == [False] * 7
    assert ends[0]["preview"] == "staged: nothing" and ends[2]["preview"] == "staged: a.txt"


def test_identical_reads_without_a_write_and_repeated_writes_are_still_stopped(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"git": fixture_server()}})
    status, stage = ("git__status", {}), ("git__stage", {"path": "a.txt"})
    replies = [*_calls(stage, status, stage, status, stage, status, stage), {"text": "stopped"}]
    result = cli("run", *GOAL, "--script", script(project, replies))
    assert result.exit_code == 4, result.output  # the 4th identical write: repetition ceiling
    ends = ends_of(events_of(result.stdout))
    assert [e["is_error"] for e in ends] == [False] * 6 + [True]
    assert "git__stage already ran 3 time(s) with exactly these arguments" in ends[-1]["preview"]
    reads = [*_calls(status, status, status, status), {"text": "stopped"}]
    again = cli("run", *GOAL, "--script", script(project, reads))
    assert again.exit_code == 4 and [e["is_error"] for e in ends_of(events_of(again.stdout))] == [False] * 3 + [True]


# -- the connecting line -----------------------------------------------------------------------------
def test_connecting_shows_on_a_terminals_stderr_only(project: Path, arreio_env, arreio_cmd) -> None:
    configure(project, {"mcp_servers": {"a": fixture_server(), "b": fixture_server()}})
    replies = [{"text": "hi"}]
    args = ["run", *GOAL, "--script", script(project, replies)]
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        arreio_cmd + args,
        cwd=project,
        env=arreio_env,
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    os.close(slave)
    seen = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 1024)
            except OSError:  # EIO: the child closed the terminal
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    stdout, _ = proc.communicate(timeout=60)
    reader.join(timeout=5)
    os.close(master)
    assert proc.returncode == 0
    assert "arreio: connecting to 2 MCP servers…" in seen.decode() and "\x1b[K" in seen.decode()  # erased after
    assert "connecting to" not in stdout  # never in --json stdout
    piped = run_arreio(project, arreio_env, arreio_cmd, args)
    assert piped.returncode == 0 and "connecting to" not in piped.stderr  # not a terminal: nothing

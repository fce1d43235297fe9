"""MCP client against a REAL stdio server: list, call, error result, images and resources, a slow call
hitting the timeout, a crash mid-run, a server that cannot start, and a clean shutdown.

The fixture server is fixtures/mcp/wire_server.py (the wire format, stdlib only); the core checks run
against fixtures/mcp/server.py (the same tools, written with the official `mcp` package) as well, so
arreio stays tested against the official server: `BOTH`, and the `shared` server's two params."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from arreio.engine.core.errors import ConfigError
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.mcp.config import parse_mcp_servers
from arreio.engine.tools.mcp.hub import McpHub, tool_name
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext
from tests.families.conftest import fixture_server

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # real MCP server processes

BOTH = pytest.mark.parametrize("sdk", [False, True], ids=["wire", "sdk"])


def _hub(tmp_path, **servers) -> McpHub:
    hub = McpHub(
        parse_mcp_servers(servers), cwd=tmp_path, env={"PATH": os.environ.get("PATH", "")}, log_dir=tmp_path / "logs"
    )
    hub.start()
    return hub


@pytest.fixture(scope="module", params=[False, True], ids=["wire", "sdk"])
def shared(request, tmp_path_factory):
    """One started server of each kind for the read-only checks (the SDK one's start-up costs ~0.5 s).
    Its calls get the default bound: a busy machine may take a second over a quick one."""
    tmp = tmp_path_factory.mktemp("mcp")
    hub = _hub(tmp, fx=fixture_server(sdk=request.param))
    yield hub, ToolRegistry(hub.tools()), RunContext(cwd=tmp)
    hub.close()


def call(registry, ctx, name, args=None):
    return asyncio.run(run_tool(registry, name, args or {}, ctx))


def test_lists_tools_with_prefixed_names_and_their_schemas(shared) -> None:
    hub, registry, _ = shared
    assert {"fx__echo", "fx__add", "fx__fail", "fx__slow", "fx__crash", "fx__picture"} <= set(registry.names())
    add = registry.get("fx__add")
    assert add.input_schema()["required"] == ["a", "b"]
    assert add.input_schema()["properties"]["a"]["type"] == "integer"
    assert add.description.startswith("[MCP fx] Add two integers")
    assert add.sensitive  # the server does not say it is read-only
    assert hub.states()[0].state == "ready" and "fx__add" in hub.states()[0].tools


def test_missing_env_var_in_server_env_is_a_warning_not_a_crash(tmp_path) -> None:
    hub = _hub(tmp_path, a=fixture_server(env={"FIXTURE_PREFIX": "${NOPE_NOT_SET}"}))
    try:
        assert hub.tools() == []
        assert hub.states()[0].state == "failed"
        assert "NOPE_NOT_SET" in hub.drain_warnings()[0]
    finally:
        hub.close()


@BOTH
def test_call_returns_text_through_the_chain(tmp_path, sdk) -> None:
    hub = McpHub(
        parse_mcp_servers({"fx": fixture_server(sdk=sdk, env={"FIXTURE_PREFIX": "${GREETING}"})}),
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", ""), "GREETING": "hi "},
        log_dir=None,
    )
    hub.start()
    try:
        registry, ctx = ToolRegistry(hub.tools()), RunContext(cwd=tmp_path)
        assert call(registry, ctx, "fx__echo", {"text": "there"}).content == "hi there"
        result = call(registry, ctx, "fx__add", {"a": 2, "b": 40})
        assert (result.content, result.is_error) == ("42", False)
    finally:
        hub.close()


def test_bad_arguments_fail_in_the_chain_with_a_readable_message(shared) -> None:
    _, registry, ctx = shared
    missing = call(registry, ctx, "fx__add", {"a": 1})
    assert missing.is_error and "missing required argument(s): b" in missing.content
    wrong = call(registry, ctx, "fx__add", {"a": "one", "b": 2})
    assert wrong.is_error and "'a' must be integer" in wrong.content
    bad_float = call(registry, ctx, "fx__add", {"a": "1.5", "b": 2})
    assert bad_float.is_error and "'a' must be integer" in bad_float.content


def test_numbers_sent_as_strings_are_converted_as_for_built_in_tools(shared) -> None:
    _, registry, ctx = shared
    result = call(registry, ctx, "fx__add", {"a": " 40", "b": "2"})
    assert (result.content, result.is_error) == ("42", False)  # the server received integers
    text = call(registry, ctx, "fx__echo", {"text": "7"})
    assert text.content == "7" and not text.is_error  # a string the schema wants stays a string


def test_an_error_result_from_the_server_is_an_error_result(shared) -> None:
    _, registry, ctx = shared
    result = call(registry, ctx, "fx__fail", {"reason": "disk full"})
    assert result.is_error and "disk full" in result.content


def test_images_and_embedded_resources_are_normalised(shared) -> None:
    _, registry, ctx = shared
    picture = call(registry, ctx, "fx__picture")
    assert "a one-pixel picture" in picture.content and "[image 1: image/png]" in picture.content
    assert picture.images[0].media_type == "image/png" and picture.images[0].data.startswith("iVBOR")
    document = call(registry, ctx, "fx__document")
    assert document.content == "[resource file:///notes.txt]\nthe notes say hello"


@BOTH
def test_a_slow_call_hits_the_timeout_and_the_server_stays_usable(tmp_path, sdk) -> None:
    hub = _hub(tmp_path, fx=fixture_server(sdk=sdk, timeout_s=1.0))
    try:
        registry, ctx = ToolRegistry(hub.tools()), RunContext(cwd=tmp_path)
        result = call(registry, ctx, "fx__slow", {"seconds": 600})  # never the reply: the timeout ends it
        assert result.is_error and "timed out after 1s" in result.content and "temporary" in result.content
        # Usable: a quick call answers. Under the same 1 s bound, so a busy machine gets a few tries; a
        # server left hung by the timeout answers none of them.
        assert any(call(registry, ctx, "fx__add", {"a": 1, "b": 1}).content == "2" for _ in range(5))
    finally:
        hub.close()


@BOTH
def test_a_server_that_dies_is_restarted_once_then_its_tools_are_unavailable_with_a_warning(tmp_path, sdk) -> None:
    hub = _hub(tmp_path, fx=fixture_server(sdk=sdk))
    try:
        registry, ctx = ToolRegistry(hub.tools()), RunContext(cwd=tmp_path)
        first_pid = call(registry, ctx, "fx__pid").content
        crashed = call(registry, ctx, "fx__crash")
        assert crashed.is_error and "stopped during the call and is being restarted (once per run)" in crashed.content
        assert "if this call is what stopped it, do not repeat it" in crashed.content
        restarted = call(registry, ctx, "fx__pid")  # waits for the restart under way
        assert not restarted.is_error and restarted.content != first_pid
        warnings = hub.drain_warnings()
        assert (
            len(warnings) == 1 and "MCP server 'fx' stopped mid-run" in warnings[0] and "restarting it" in warnings[0]
        )
        assert "it wrote nothing to stderr during the call" in warnings[0] and "unrelated" not in warnings[0]
        assert hub.states()[0].state == "ready" and hub.withdrawn() == set()

        again = call(registry, ctx, "fx__crash")  # the second death: withdrawn, no second restart
        assert again.is_error and "withdrawn for the rest of this run" in again.content
        after = call(registry, ctx, "fx__add", {"a": 1, "b": 2})
        assert after.is_error and "is not running" in after.content and "unavailable" in after.content
        warnings = hub.drain_warnings()
        assert (
            len(warnings) == 1 and "MCP server 'fx' stopped again mid-run" in warnings[0] and "withdrawn" in warnings[0]
        )
        assert hub.states()[0].state == "dead" and "fx__add" in hub.withdrawn()
        log = (tmp_path / "logs" / "mcp-fx.log").read_text()
        assert log.count("fixture: serving") == 2  # the restart appended to the first life's log
    finally:
        hub.close()


def test_a_crash_quotes_what_the_server_said_during_the_call(tmp_path) -> None:
    hub = _hub(tmp_path, fx=fixture_server())
    try:
        registry, ctx = ToolRegistry(hub.tools()), RunContext(cwd=tmp_path)
        call(registry, ctx, "fx__crash", {"last_words": "fatal: out of file handles"})
        warning = hub.drain_warnings()[0]
        assert "its stderr ends: fatal: out of file handles" in warning and "unrelated" not in warning
    finally:
        hub.close()


def test_a_server_that_fails_to_start_is_a_warning_with_its_stderr_and_no_tools(tmp_path) -> None:
    hub = _hub(
        tmp_path,
        broken=fixture_server(env={"FIXTURE_MCP_FAIL_START": "1"}),
        missing={"command": "/no/such/server-binary"},
        ok=fixture_server(),
    )
    try:
        names = [t.name for t in hub.tools()]
        assert names and all(n.startswith("ok__") for n in names)
        states = {s.name: s for s in hub.states()}
        assert states["broken"].state == "failed" and "missing API token" in states["broken"].detail
        assert states["missing"].state == "failed" and "/no/such/server-binary" in states["missing"].detail
        warnings = hub.drain_warnings()
        assert len(warnings) == 2 and all("failed to start" in w for w in warnings)
        assert (tmp_path / "logs" / "mcp-broken.log").exists()
    finally:
        hub.close()


@BOTH
def test_close_shuts_the_server_process_down(tmp_path, sdk) -> None:
    hub = _hub(tmp_path, fx=fixture_server(sdk=sdk))
    registry, ctx = ToolRegistry(hub.tools()), RunContext(cwd=tmp_path)
    pid = int(call(registry, ctx, "fx__pid").content)
    hub.close()
    hub.close()  # idempotent
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)
    late = call(registry, ctx, "fx__add", {"a": 1, "b": 2})
    assert late.is_error and "not running" in late.content


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped) counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@BOTH
def test_cancelling_a_call_returns_promptly(tmp_path, sdk) -> None:
    hub = _hub(tmp_path, fx=fixture_server(sdk=sdk, timeout_s=900))
    try:
        registry, ctx = ToolRegistry(hub.tools()), RunContext(cwd=tmp_path)

        async def cancel_soon():
            # a call that would take 10 minutes: one the cancel did not end holds the test past its timeout
            task = asyncio.ensure_future(run_tool(registry, "fx__slow", {"seconds": 600}, ctx))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(cancel_soon())
        assert call(registry, ctx, "fx__add", {"a": 2, "b": 2}).content == "4"
    finally:
        hub.close()


def test_tool_names_are_safe_for_providers_and_unique() -> None:
    assert tool_name("gh", "repo.search") == "gh__repo_search"
    long = tool_name("srv", "x" * 100)
    assert len(long) == 64
    assert tool_name("srv", "x" * 100, {long}).endswith("_2") and len(tool_name("srv", "x" * 100, {long})) == 64


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"bad__name": {"command": "x"}}, "mcp_servers.bad__name"),
        ({"a": {"command": "x", "url": "http://h"}}, "not both"),
        ({"a": {"args": []}}, "needs 'command'"),
        ({"a": {"command": "x", "timeout_s": -1}}, "mcp_servers.a.timeout_s"),
        ({"a": {"url": "ftp://h"}}, "mcp_servers.a.url"),
        ({"a": {"command": "x", "colour": "red"}}, "mcp_servers.a.colour"),
        ({"a": "python server.py"}, "expected a mapping"),
    ],
)
def test_config_mistakes_are_one_config_error_naming_the_field(section, message) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        parse_mcp_servers(section)


def test_http_servers_parse_and_disabled_servers_are_not_started(tmp_path) -> None:
    servers = parse_mcp_servers(
        {"remote": {"url": "https://mcp.example.com/mcp", "headers": {"A": "b"}}, "off": fixture_server(enabled=False)}
    )
    assert servers["remote"].transport == "http" and servers["off"].enabled is False
    hub = McpHub({"off": servers["off"]}, cwd=tmp_path, env={}, log_dir=None)
    hub.start()
    try:
        assert hub.tools() == [] and hub.states()[0].state == "disabled"
    finally:
        hub.close()


def test_streamable_http_server_with_headers_from_the_environment(tmp_path) -> None:
    """Streamable HTTP is the SDK server's (the stdlib one speaks stdio only)."""
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "FIXTURE_MCP_HTTP_PORT": str(port)}
    proc = subprocess.Popen(
        [sys.executable, str(fixture_server(sdk=True)["args"][0])],
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
        servers = parse_mcp_servers(
            {"web": {"url": f"http://127.0.0.1:{port}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}
        )
        hub = McpHub(servers, cwd=tmp_path, env={"TOKEN": "t0k"}, log_dir=None)
        hub.start()
        try:
            assert hub.states()[0].state == "ready", hub.states()[0].detail
            registry, ctx = ToolRegistry(hub.tools()), RunContext(cwd=tmp_path)
            assert call(registry, ctx, "web__add", {"a": 20, "b": 22}).content == "42"
        finally:
            hub.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


SERVER_TOKEN = "Q7vN2pL9rT4wK8mB3cD6fGh1jZ5xY0sA"  # no known format: only its variable's name marks it


def test_a_token_the_server_prints_never_reaches_its_log_nor_a_warning(tmp_path) -> None:
    """What a server writes on stderr (and a stdout line that is not MCP) goes through the redactor on
    its way into `logs/mcp-<server>.log`, as every file arreio keeps does; so does the stderr a
    crash warning quotes."""
    say = "authenticated as octocat with token ${GITHUB_TOKEN}"
    servers = parse_mcp_servers(
        {
            "gh": fixture_server(env={"GITHUB_TOKEN": "${GITHUB_TOKEN}", "FIXTURE_MCP_SAY": say}),
            "broken": fixture_server(env={"FIXTURE_MCP_FAIL_START": "1", "FIXTURE_MCP_SAY": say}),
        }
    )
    hub = McpHub(
        servers,
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", ""), "GITHUB_TOKEN": SERVER_TOKEN},
        log_dir=tmp_path / "logs",
    )
    hub.start()
    try:
        registry, ctx = ToolRegistry(hub.tools()), RunContext(cwd=tmp_path)
        assert call(registry, ctx, "gh__add", {"a": 1, "b": 2}).content == "3"
        call(
            registry, ctx, "gh__crash", {"last_words": f"fatal: token {SERVER_TOKEN[:16]}\n{SERVER_TOKEN[16:]} revoked"}
        )
        shown = " ".join(hub.drain_warnings() + [s.detail for s in hub.states()])
        assert "token [REDACTED:GITHUB_TOKEN] revoked" in shown and "missing API token" in shown
        assert SERVER_TOKEN[:12] not in shown and SERVER_TOKEN[-12:] not in shown
    finally:
        hub.close()
    for name in ("gh", "broken"):
        log = (tmp_path / "logs" / f"mcp-{name}.log").read_bytes()
        assert b"authenticated as octocat with token [REDACTED:GITHUB_TOKEN]" in log, log
        assert SERVER_TOKEN[:12].encode() not in log and SERVER_TOKEN[-12:].encode() not in log, log
    assert b"fixture: serving" in (tmp_path / "logs" / "mcp-gh.log").read_bytes()


def test_a_token_written_in_two_pieces_is_held_until_its_second(tmp_path) -> None:
    """The log reads the server's stderr pipe whenever it holds something: a key whose halves arrive
    in two writes (a line break between them) is held, not written half by half where neither half
    looks like a secret."""
    from arreio.engine.tools.mcp.logs import ServerLog
    from arreio.engine.walls.redact import Redactor

    async def scenario() -> None:
        log = ServerLog(tmp_path / "mcp-fx.log", redactor=Redactor.from_env({"GITHUB_TOKEN": SERVER_TOKEN}))
        stderr = log.errlog()
        stderr.write(f"fatal: token {SERVER_TOKEN[:16]}\n")
        stderr.flush()
        log.pump()  # what the loop does when the pipe holds something
        assert SERVER_TOKEN[:16] not in (tmp_path / "mcp-fx.log").read_text()
        stderr.write(f"{SERVER_TOKEN[16:]} revoked\nfixture: bye\n")
        stderr.flush()
        log.pump()
        log.close()

    asyncio.run(scenario())
    text = (tmp_path / "mcp-fx.log").read_text()
    assert text == "fatal: token [REDACTED:GITHUB_TOKEN] revoked\nfixture: bye\n", text

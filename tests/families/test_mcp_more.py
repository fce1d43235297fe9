"""MCP beyond tools, against a REAL server as a subprocess: resources as two read-only tools (large
ones become result sets), prompts (`arreio mcp prompts`, `arreio run --mcp-prompt`), a server's
`instructions` in the prompt only when its tools are offered, `tools/list_changed` refreshing the tool
list at the next step, and a dead stdio server restarted once per run.

The server is fixtures/mcp/rich_wire_server.py (the wire format, stdlib only, a handshake-era server).
Resources, instructions, prompts and the changed tool list are checked against
fixtures/mcp/rich_server.py (the same server, written with the official `mcp` package) as well:
`BOTH`, and the `notes` servers' two params. Against it a changed tool list arrives on the
`subscriptions/listen` stream of a 2026-era connection."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest

from arreio.engine.core.errors import UsageError
from arreio.engine.providers.testing import FixedClock, ScriptedProvider, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.mcp.config import parse_mcp_servers
from arreio.engine.tools.mcp.hub import McpHub
from arreio.engine.tools.mcp.instructions import InstructionsBlock
from arreio.engine.tools.mcp.prompts import PromptInfo, Prompts, check_arguments, parse_args, parse_ref
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext
from tests.conftest import REPO
from tests.families.conftest import configure, fixture_server, script

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # real MCP server processes

RICH = REPO / "fixtures" / "mcp" / "rich_wire_server.py"  # the wire format itself, stdlib only
RICH_SDK = REPO / "fixtures" / "mcp" / "rich_server.py"  # the same server on the official `mcp` SDK
GOAL = ["--goal", "GOAL.md", "--json"]
BOTH = pytest.mark.parametrize("sdk", [False, True], ids=["wire", "sdk"])


def rich(*, sdk: bool = False, **extra) -> dict:
    """A `mcp_servers` entry for the rich server: the stdlib one, or with `sdk=True` the one written
    with the official SDK, whose start may take long on a busy machine (a wait, not a bound)."""
    env = extra.pop("env", {})
    if sdk:
        return {"command": sys.executable, "args": [str(RICH_SDK)], "env": env, "connect_timeout_s": 120, **extra}
    return {"command": sys.executable, "args": [str(RICH)], "env": env, **extra}


def events_of(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def _pipeline(work: Path, replies: list[dict], config: dict, **options) -> tuple[list, ScriptedProvider]:
    configure(work, config)
    provider = ScriptedProvider(replies)
    deps = PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(provider))
    run = RunOptions(
        goal_text="# go\n", cwd=work, env={"PATH": os.environ.get("PATH", ""), "HOME": str(work)}, yes=True, **options
    )
    return asyncio.run(run_to_end(run, deps)), provider


def _hub(tmp_path: Path, **servers) -> McpHub:
    hub = McpHub(
        parse_mcp_servers(servers), cwd=tmp_path, env={"PATH": os.environ.get("PATH", "")}, log_dir=tmp_path / "logs"
    )
    hub.start()
    return hub


def call(registry, ctx, name, args=None):
    return asyncio.run(run_tool(registry, name, args or {}, ctx))


# -- resources -------------------------------------------------------------------------------------
@pytest.fixture(scope="module", params=[False, True], ids=["wire", "sdk"])
def notes(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("notes")
    sdk = request.param
    hub = _hub(tmp, notes=rich(sdk=sdk), fx=fixture_server(), bare=rich(sdk=sdk, env={"FIXTURE_MCP_NO_RESOURCES": "1"}))
    yield hub, ToolRegistry(hub.tools()), RunContext(cwd=tmp)
    hub.close()


def test_resource_tools_are_offered_only_for_a_server_with_resources(notes) -> None:
    _, registry, _ = notes
    names = registry.names()
    assert {"notes__list_resources", "notes__read_resource"} <= set(names)
    assert not any(n.startswith(("fx__", "bare__")) and "resource" in n for n in names)
    assert "bare__echo" in names and "fx__add" in names  # the servers are up, they just have no resources
    read = registry.get("notes__read_resource")
    assert read.read_only and not read.sensitive and read.repeat == "reads"
    assert read.input_schema()["required"] == ["uri"]
    assert "notes://readme" in registry.get("notes__list_resources").description  # named: a listing may be skipped


def test_list_and_read_resources_through_the_chain(notes) -> None:
    _, registry, ctx = notes
    listing = call(registry, ctx, "notes__list_resources")
    assert not listing.is_error and listing.content.startswith("4 resource(s) of MCP server 'notes'")
    assert "notes://readme — readme (text/plain): What the notes are." in listing.content
    assert "notes://item/{n} — item (text/plain): One numbered note. [template" in listing.content
    assert (
        call(registry, ctx, "notes__read_resource", {"uri": "notes://readme"}).content
        == "These notes hold the release checklist."
    )
    assert call(registry, ctx, "notes__read_resource", {"uri": "notes://item/7"}).content == "note number 7"
    blob = call(registry, ctx, "notes__read_resource", {"uri": "notes://logo"})
    assert blob.content == "[binary resource notes://logo (application/octet-stream), 256 bytes, not shown]"
    typo = call(registry, ctx, "notes__read_resource", {"uri": "notes://readm"})
    assert typo.is_error and "Unknown resource" in typo.content and "did you mean notes://readme" in typo.content
    missing = call(registry, ctx, "notes__read_resource", {})
    assert missing.is_error and "missing required argument(s): uri" in missing.content


def test_the_servers_instructions_and_capabilities_are_read_at_start(notes) -> None:
    hub, _, _ = notes
    said = hub.instructions()
    assert said["notes"].startswith("Notes server: read notes://readme first") and said["bare"] == said["notes"]
    assert "fx" not in said  # it says nothing about itself
    assert hub.offers("notes", "prompts") and hub.offers("bare", "resources")  # advertised, though bare lists none


def test_a_server_that_lists_no_resources_and_the_deny_list_hide_the_tools(tmp_path) -> None:
    hub = _hub(tmp_path, notes=rich(tools={"deny": ["read_resource"]}))
    try:
        tools = {t.name: t for t in hub.tools()}
        assert tools["notes__read_resource"].withheld == "in its server's tools.deny (mcp_servers.notes.tools)"
        assert tools["notes__list_resources"].withheld is None
        assert hub.drain_warnings() == []  # `read_resource` is a name the server's tools: filter knows
    finally:
        hub.close()


def test_a_large_resource_becomes_a_result_set_and_reads_need_no_approval(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"notes": rich()}})
    replies = [
        {"tool_calls": [{"name": "notes__read_resource", "arguments": {"uri": "notes://big"}}]},
        {"text": "read it"},
    ]
    result = cli("run", *GOAL, "--script", script(project, replies))  # no --yes: a sensitive call would pause
    assert result.exit_code == 0, result.output
    events = events_of(result.stdout)
    assert not [e for e in events if e["type"] == "approval_required"]
    end = next(e for e in events if e["type"] == "tool_end")
    assert not end["is_error"] and end["preview"].startswith("[result set ")
    assert "notes__read_resource result was 4001 lines" in end["preview"]
    session = next((project / ".arreio" / "sessions").glob("*.jsonl")).read_text()
    assert "Schema: row INTEGER, value INTEGER" in session  # the CSV, queryable by result_query


# -- instructions ----------------------------------------------------------------------------------
def test_instructions_enter_the_stable_prompt_only_when_the_servers_tools_are_offered(project: Path) -> None:
    _, provider = _pipeline(project, [{"text": "ok"}], {"mcp_servers": {"notes": rich(), "fx": fixture_server()}})
    system = provider.requests[0].system
    names = [b.name for b in system]
    block = next(b for b in system if b.name == "mcp_instructions")
    assert block.stable and names.index("mcp_instructions") < names.index("environment")
    assert "## notes\nNotes server: read notes://readme first" in block.text
    assert "not by the user" in block.text and "## fx" not in block.text  # fx says nothing about itself

    _, without = _pipeline(project, [{"text": "ok"}], {"mcp_servers": {"notes": rich()}}, no_tools=["notes__*"])
    assert "mcp_instructions" not in [b.name for b in without.requests[0].system]
    assert not any(t.name.startswith("notes__") for t in without.requests[0].tools)


def test_instructions_block_is_capped_per_server_and_silent_without_offered_tools() -> None:
    texts = {"a": "x" * 5000, "b": "short"}
    block = InstructionsBlock(lambda: texts, lambda: ["a__t", "read_file"])
    rendered = block.render()
    assert rendered is not None and "## a\n" in rendered and "## b" not in rendered
    assert "[… block cut at 2000 of 5000 chars]" in rendered
    assert InstructionsBlock(lambda: texts, lambda: ["read_file"]).render() is None


# -- tools/list_changed ----------------------------------------------------------------------------
@BOTH
def test_a_changed_tool_list_is_offered_at_the_next_step(project: Path, sdk: bool) -> None:
    replies = [
        {"tool_calls": [{"name": "notes__unlock"}]},
        {"tool_calls": [{"name": "notes__secret"}]},
        {"tool_calls": [{"name": "notes__lock"}]},
        {"tool_calls": [{"name": "notes__secret"}]},  # the model insists on a tool that is gone
        {"text": "done"},
    ]
    events, provider = _pipeline(project, replies, {"mcp_servers": {"notes": rich(sdk=sdk)}})
    offered = [{t.name for t in r.tools} for r in provider.requests]
    assert "notes__secret" not in offered[0]
    assert "notes__secret" in offered[1] and "notes__secret" in offered[2]
    assert "notes__secret" not in offered[3] and "notes__echo" in offered[3]
    ends = [e for e in events if e.type == "tool_end"]
    assert [e.name for e in ends] == ["notes__unlock", "notes__secret", "notes__lock", "notes__secret"]
    assert ends[1].preview == "the secret is 42" and not ends[1].is_error
    assert ends[3].is_error and "no longer offers the tool 'secret'" in ends[3].preview


def test_a_tool_added_mid_run_still_obeys_the_runs_allow_list(project: Path) -> None:
    replies = [
        {"tool_calls": [{"name": "notes__unlock"}]},
        {"tool_calls": [{"name": "notes__secret"}]},
        {"text": "done"},
    ]
    events, provider = _pipeline(
        project, replies, {"mcp_servers": {"notes": rich()}}, tools=["notes__unlock", "notes__lock", "read_file"]
    )
    assert not any("notes__secret" in {t.name for t in r.tools} for r in provider.requests)
    ends = [e for e in events if e.type == "tool_end"]
    assert ends[1].is_error and "unknown tool 'notes__secret'" in ends[1].preview


# -- restart once ----------------------------------------------------------------------------------
def test_a_server_that_dies_idle_is_restarted_once_then_withdrawn(project: Path, tmp_path: Path) -> None:
    starts = tmp_path / "starts.txt"
    env = {"FIXTURE_MCP_STARTS": str(starts), "FIXTURE_MCP_DIE_AFTER_S": "1.5"}
    wait = {"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 2"}}]}
    pid = {"tool_calls": [{"name": "notes__pid"}]}
    replies = [pid, wait, pid, wait, pid, {"text": "done"}]
    events, provider = _pipeline(project, replies, {"mcp_servers": {"notes": rich(env=env)}})
    ends = [e for e in events if e.type == "tool_end" and e.name == "notes__pid"]
    lives = starts.read_text().split()
    assert len(lives) == 2  # started, restarted once, never a third time
    assert ends[0].preview == lives[0] and not ends[0].is_error
    assert ends[1].preview == lives[1] and not ends[1].is_error  # the restarted process answered
    assert ends[2].is_error  # died again: withdrawn
    mcp = [e.message for e in events if e.type == "warning" and e.code == "mcp"]
    assert len(mcp) == 2 and "restarting it (once per run)" in mcp[0] and "stopped again mid-run" in mcp[1]
    assert "dying on purpose" in mcp[0]  # what it said on stderr before it went
    assert not any(t.name.startswith("notes__") for t in provider.requests[-1].tools)


# -- prompts ---------------------------------------------------------------------------------------
def test_prompt_refs_and_arguments_are_checked_before_the_server_is_asked() -> None:
    assert parse_ref("notes/review") == ("notes", "review") and parse_ref("review") == (None, "review")
    with pytest.raises(UsageError, match="SERVER/NAME"):
        parse_ref("notes/")
    assert parse_args(["file=a.py", "focus=x=y"]) == {"file": "a.py", "focus": "x=y"}
    with pytest.raises(UsageError, match="NAME=VALUE"):
        parse_args(["file"])
    prompt = PromptInfo(
        "notes",
        "review",
        "",
        [
            {"name": "file", "description": "", "required": True},
            {"name": "focus", "description": "", "required": False},
        ],
    )
    check_arguments(prompt, {"file": "a.py"})
    with pytest.raises(UsageError, match=r"needs --arg file=… \(its arguments: file \(required\), focus\)"):
        check_arguments(prompt, {"focus": "speed"})
    with pytest.raises(UsageError, match="has no argument 'fiel' \\(did you mean 'file'\\?\\)"):
        check_arguments(prompt, {"fiel": "a.py"})


def test_mcp_prompts_lists_shows_and_renders(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"notes": rich(), "fx": fixture_server()}})
    listed = cli("mcp", "prompts", "--json")
    assert listed.exit_code == 0, listed.output
    prompts = {p["ref"]: p for p in json.loads(listed.stdout)["prompts"]}
    assert set(prompts) == {"notes/review", "notes/greet"}
    assert prompts["notes/review"]["arguments"] == [
        {"name": "file", "description": "", "required": True},
        {"name": "focus", "description": "", "required": False},
    ]
    table = cli("mcp", "prompts")
    assert "notes/review" in table.stdout and "[args: file (required), focus]" in table.stdout
    shown = cli("mcp", "prompts", "review")
    assert shown.exit_code == 0 and "--arg file=…  (required)" in shown.stdout
    assert "arreio run --mcp-prompt notes/review --arg file=…" in shown.stdout
    rendered = cli("mcp", "prompts", "notes/review", "--arg", "file=a.py", "--arg", "focus=speed")
    assert "Review a.py for speed. List each finding with its line number." in rendered.stdout
    typo = cli("mcp", "prompts", "notes/reveiw")
    assert typo.exit_code == 2 and "did you mean 'notes/review'?" in typo.stderr
    assert "Traceback" not in typo.output


@BOTH
def test_a_prompt_is_listed_checked_and_rendered_by_its_server(tmp_path: Path, sdk: bool) -> None:
    prompts = Prompts(
        parse_mcp_servers({"notes": rich(sdk=sdk)}),
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", "")},
        log_dir=tmp_path / "logs",
    )
    goal = prompts.goal("notes/review", {"file": "a.py", "focus": "speed"})  # one connection: list, check, get
    assert goal == "Review a.py for speed. List each finding with its line number."


def test_run_with_an_mcp_prompt_as_the_goal(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"notes": rich()}})
    replies = [{"text": "reviewed"}]
    result = cli(
        "run", "--json", "--mcp-prompt", "notes/review", "--arg", "file=a.py", "--script", script(project, replies)
    )
    assert result.exit_code == 0, result.output
    session = next((project / ".arreio" / "sessions").glob("*.jsonl")).read_text()
    assert "Review a.py for bugs. List each finding with its line number." in session


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mcp-prompt", "notes/review"], "prompt notes/review needs --arg file=…"),
        (["--mcp-prompt", "notes/review", "--arg", "fiel=a"], "has no argument 'fiel' (did you mean 'file'?)"),
        (["--mcp-prompt", "notes/reviwe", "--arg", "file=a"], "no prompt 'reviwe' on server 'notes' (did you mean"),
        (["--mcp-prompt", "nots/review"], "no MCP server named 'nots' in config (did you mean 'notes'?)"),
        (["--arg", "file=a", "--goal", "GOAL.md"], "--arg is an argument of --mcp-prompt"),
        (["--mcp-prompt", "notes/review", "--goal", "GOAL.md"], "--mcp-prompt is the goal"),
    ],
)
def test_a_bad_mcp_prompt_is_one_line_and_exit_2(project: Path, cli, args: list[str], message: str) -> None:
    configure(project, {"mcp_servers": {"notes": rich()}})
    result = cli("run", "--offline", *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_the_restart_keeps_one_log_file(tmp_path: Path) -> None:
    hub = _hub(tmp_path, notes=rich())
    try:
        registry, ctx = ToolRegistry(hub.tools()), RunContext(cwd=tmp_path)
        call(registry, ctx, "notes__crash")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and hub.states()[0].state != "ready":
            time.sleep(0.05)
        assert hub.states()[0].state == "ready" and "restarted once" in hub.states()[0].detail
        assert (tmp_path / "logs" / "mcp-notes.log").exists()
    finally:
        hub.close()


def test_a_handshake_era_notification_marks_the_server_for_relisting() -> None:
    """2026-era connections get the change on a listen stream (the SDK server's, above); a handshake-era
    server (the wire one, above) sends the plain notification, which reaches the same handler."""
    from mcp_types import ToolListChangedNotification

    from arreio.engine.tools.mcp.connection import Connection

    conn = Connection("old", parse_mcp_servers({"old": rich()})["old"])
    asyncio.run(conn.on_message(RuntimeError("a transport hiccup")))  # exceptions reach the handler too
    assert not conn.changed
    asyncio.run(conn.on_message(ToolListChangedNotification()))
    assert conn.changed

"""MCP servers in real runs (`arreio run` with a scripted model) and the `arreio mcp` commands."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.conftest import INTERRUPTIBLE
from tests.families.conftest import configure, fixture_server, script

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # real MCP server processes


def events_of(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def report_of(work: Path, events: list[dict]) -> dict:
    return json.loads((work / events[-1]["report_path"]).read_text())


def test_a_run_calls_mcp_tools_survives_a_crash_restarts_once_and_reports_it(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"fx": fixture_server()}})
    replies = [
        {"tool_calls": [{"name": "fx__add", "arguments": {"a": 40, "b": 2}}, {"name": "fx__pid"}]},
        {"tool_calls": [{"name": "fx__crash"}]},
        {"tool_calls": [{"name": "fx__add", "arguments": {"a": 1, "b": 1}}]},  # the restarted server answers
        {"tool_calls": [{"name": "fx__crash"}]},
        {"tool_calls": [{"name": "fx__add", "arguments": {"a": 1, "b": 1}}]},  # now it is gone
        {"text": "The server answered 42, crashed, came back, crashed again."},
    ]
    result = cli("run", "--goal", "GOAL.md", "--script", script(project, replies), "--json", "--yes")
    assert result.exit_code == 0, result.output
    events = events_of(result.stdout)
    ends = [e for e in events if e["type"] == "tool_end"]
    assert [e["name"] for e in ends] == ["fx__add", "fx__pid", "fx__crash", "fx__add", "fx__crash", "fx__add"]
    assert ends[0]["preview"] == "42" and not ends[0]["is_error"]
    assert ends[2]["is_error"] and "being restarted" in ends[2]["preview"]
    assert ends[3]["preview"] == "2" and not ends[3]["is_error"]
    assert ends[4]["is_error"] and ends[5]["is_error"] and "not running" in ends[5]["preview"]
    warnings = [e for e in events if e["type"] == "warning"]
    assert [w["code"] for w in warnings] == ["mcp", "mcp"]
    assert "restarting it (once per run)" in warnings[0]["message"]
    assert "stopped again mid-run" in warnings[1]["message"] and "withdrawn" in warnings[1]["message"]
    assert events[-1]["verdict"] == "success"
    report = report_of(project, events)
    assert any("stopped again mid-run" in w for w in report["warnings"])
    assert report["tool_schema_tokens"] > 0
    # the schemas went to the model: the first request offered the server's tools
    session = (project / ".arreio" / "sessions").glob("*.jsonl")
    assert next(session).read_text().count("fx__") >= 4


def test_servers_are_shut_down_when_the_run_ends(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"fx": fixture_server()}})
    replies = [{"tool_calls": [{"name": "fx__pid"}]}, {"text": "ok"}]
    result = cli("run", "--goal", "GOAL.md", "--script", script(project, replies), "--json", "--yes")
    assert result.exit_code == 0, result.output
    pid_line = (project / ".arreio" / "sessions").glob("*.jsonl")
    pid = int(
        next(line for line in next(pid_line).read_text().splitlines() if '"fx__pid"' in line and '"tool"' in line)
        .split('"content":"')[1]
        .split('"')[0]
    )
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return "Z"


def test_a_server_that_cannot_start_is_a_warning_and_the_run_goes_on(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"broken": fixture_server(env={"FIXTURE_MCP_FAIL_START": "1"})}})
    replies = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "GOAL.md"}}]}, {"text": "read it"}]
    result = cli("run", "--goal", "GOAL.md", "--script", script(project, replies), "--json")
    assert result.exit_code == 0, result.output
    events = events_of(result.stdout)
    warning = next(e for e in events if e["type"] == "warning")
    assert "MCP server 'broken' failed to start" in warning["message"] and "missing API token" in warning["message"]
    kinds = [e["type"] for e in events]
    assert kinds.index("warning") < kinds.index("tool_start")  # said before the model's first move
    assert any("failed to start" in w for w in report_of(project, events)["warnings"])


def test_tools_flags_accept_patterns_over_mcp_tools(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"fx": fixture_server()}})
    replies = [{"tool_calls": [{"name": "fx__crash"}]}, {"text": "done"}]
    result = cli(
        "run",
        "--goal",
        "GOAL.md",
        "--script",
        script(project, replies),
        "--json",
        "--yes",
        "--tools",
        "fx__*,read_file",
        "--no-tools",
        "fx__crash",
    )
    assert result.exit_code == 0, result.output
    ends = [e for e in events_of(result.stdout) if e["type"] == "tool_end"]
    assert ends[0]["is_error"] and "unknown tool 'fx__crash'" in ends[0]["preview"]
    assert (
        "fx__add" in ends[0]["preview"] and "read_file" in ends[0]["preview"] and "write_file" not in ends[0]["preview"]
    )


def test_mcp_list_shows_state_and_tools(project: Path, cli) -> None:
    configure(
        project,
        {
            "mcp_servers": {
                "fx": fixture_server(),
                "broken": fixture_server(env={"FIXTURE_MCP_FAIL_START": "1"}),
                "off": fixture_server(enabled=False),
            }
        },
    )
    result = cli("mcp", "list", "--json")
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.stdout)["servers"]}
    # each tool is an object (name, description, input schema): a script can see what the model would
    assert rows["fx"]["state"] == "ready" and rows["fx"]["transport"] == "stdio"
    assert "fx__add" in [t["name"] for t in rows["fx"]["tools"]]
    assert rows["broken"]["state"] == "failed" and "missing API token" in rows["broken"]["detail"]
    assert rows["off"]["state"] == "disabled"
    table = cli("mcp", "list")
    assert table.exit_code == 0 and "fx__add" in table.stdout and "failed" in table.stdout


def test_mcp_list_without_servers_says_how_to_add_one(project: Path, cli) -> None:
    result = cli("mcp", "list")
    assert result.exit_code == 0 and "no MCP servers configured" in result.stdout


def test_mcp_test_connects_and_lists_or_fails_with_exit_1(project: Path, cli) -> None:
    configure(
        project,
        {
            "mcp_servers": {
                "fx": fixture_server(enabled=False),
                "broken": fixture_server(env={"FIXTURE_MCP_FAIL_START": "1"}),
            }
        },
    )
    ok = cli("mcp", "test", "fx")
    assert ok.exit_code == 0, ok.output
    assert "fx: ok" in ok.stdout and "fx__echo" in ok.stdout
    bad = cli("mcp", "test", "broken")
    assert bad.exit_code == 1 and "missing API token" in bad.stderr
    unknown = cli("mcp", "test", "nope")
    assert unknown.exit_code == 2 and "no MCP server named 'nope'" in unknown.stderr and "fx, broken" in unknown.stderr


def test_a_bad_mcp_section_is_a_config_error_naming_the_field(project: Path, cli) -> None:
    configure(project, {"mcp_servers": {"fx": {"command": "x", "timeout_s": "soon"}}})
    result = cli("run", "--goal", "GOAL.md", "--offline")
    assert result.exit_code == 5 and "mcp_servers.fx.timeout_s" in result.stderr
    assert "Traceback" not in result.output
    assert os.path.exists(project)


@pytest.mark.slow
def test_ctrl_c_mid_run_shuts_the_servers_down(project: Path, arreio_env, arreio_cmd) -> None:
    import signal
    import subprocess

    configure(project, {"mcp_servers": {"fx": fixture_server()}})
    replies = [{"tool_calls": [{"name": "fx__pid"}]}, {"text": "slow words " * 40, "delay_s": 0.1, "chunk_chars": 4}]
    cmd = arreio_cmd + ["run", "--goal", "GOAL.md", "--script", script(project, replies), "--json", "--yes"]
    proc = subprocess.Popen(
        cmd, cwd=project, env=arreio_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **INTERRUPTIBLE
    )
    pid = None
    for line in proc.stdout:
        event = json.loads(line)
        if event["type"] == "tool_end" and event["name"] == "fx__pid":
            pid = int(event["preview"])
        if event["type"] == "text_delta":
            proc.send_signal(signal.SIGINT)
            break
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert pid is not None
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists() and _state(pid) != "Z":
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or _state(pid) == "Z"  # no server left behind
    report = json.loads(next((project / ".arreio" / "runs").glob("*/report.json")).read_text())
    assert report["verdict"] == "cancelled"

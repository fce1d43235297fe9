"""A stdio MCP server runs outside the sandbox, so how it starts must not run what the agent wrote:
`python -m my_server` must not import the agent's `my_server.py`, a command named in config must not
be the agent's `.venv/bin/…`, and `sandbox: true` puts a server in the room with the agent. Real
server processes, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arreio.engine.tools.sandbox import availability
from tests.conftest import run_cli
from tests.families.conftest import MCP_SERVER, configure, script

pytestmark = pytest.mark.slow
_FOUND = availability({"PATH": "/usr/bin:/bin"})
requires_sandbox = pytest.mark.skipif(not _FOUND.ok, reason=f"the OS sandbox cannot start here: {_FOUND.reason}")
PLANT = "import pathlib\npathlib.Path({marker!r}).write_text('the agent ran on the host')\n"


def _run(project: Path, env: dict, replies: list[dict], *extra: str) -> subprocess.CompletedProcess:
    return run_cli(
        project, env, "run", "--goal", "GOAL.md", "--json", "--yes", "--script", script(project, replies), *extra
    )


def _ends(done: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in done.stdout.splitlines() if '"tool_end"' in line]


def test_python_dash_m_does_not_import_the_agents_module(project: Path, arreio_env: dict, tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    (project / "my_server.py").write_text(PLANT.format(marker=str(marker)))
    configure(project, {"mcp_servers": {"mine": {"command": "python3", "args": ["-m", "my_server"]}}})
    listed = run_cli(project, arreio_env, "mcp", "list", timeout=60)
    assert "mine" in listed.stdout + listed.stderr
    _run(project, arreio_env, [{"text": "done"}])
    assert not marker.exists()


def test_a_command_in_the_projects_virtualenv_is_passed_over(project: Path, arreio_env: dict, tmp_path: Path) -> None:
    marker = tmp_path / "PLANTED-RAN"
    venv_bin = project / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "fixture-mcp").write_text(f"#!/bin/sh\ntouch {marker}\nexec {sys.executable} {MCP_SERVER}\n")
    trusted = tmp_path / "bin"
    trusted.mkdir()
    (trusted / "fixture-mcp").write_text(f"#!/bin/sh\nexec {sys.executable} {MCP_SERVER}\n")
    for script_file in (venv_bin / "fixture-mcp", trusted / "fixture-mcp"):
        script_file.chmod(0o755)
    configure(project, {"mcp_servers": {"fx": {"command": "fixture-mcp"}}})
    env = {**arreio_env, "PATH": f"{venv_bin}:{trusted}:/usr/bin:/bin"}
    done = _run(project, env, [{"tool_calls": [{"name": "fx__echo", "arguments": {"text": "hi"}}]}, {"text": "ok"}])
    assert [e["is_error"] for e in _ends(done)] == [False], done.stdout + done.stderr
    assert not marker.exists()


def test_the_working_directory_is_named_where_the_server_is_told_it(project: Path, arreio_env: dict) -> None:
    configure(
        project,
        {
            "mcp_servers": {
                "fx": {
                    "command": sys.executable,
                    "args": [str(MCP_SERVER)],
                    "env": {"FIXTURE_PREFIX": "${ARREIO_WORKDIR}|"},
                }
            }
        },
    )
    done = _run(
        project, arreio_env, [{"tool_calls": [{"name": "fx__echo", "arguments": {"text": "x"}}]}, {"text": "ok"}]
    )
    assert [e["preview"] for e in _ends(done)] == [f"{project.resolve()}|x"], done.stdout + done.stderr


@requires_sandbox
@pytest.mark.parametrize("sandboxed", [True, None, False], ids=["sandbox-true", "unset-runs-a-project-file", "false"])
def test_a_sandboxed_server_stays_in_the_room(
    project: Path, arreio_env: dict, tmp_path: Path, sandboxed: bool | None
) -> None:
    """A server that runs a file of the project runs in the sandbox unless the user says false."""
    outside = Path("/var/tmp") / f"arreio-mcp-outside-{uuid.uuid4().hex[:8]}.txt"  # not under the private /tmp
    tools = project / "tools"
    tools.mkdir()
    (tools / "srv.py").write_text(PLANT.format(marker=str(outside)))
    python = os.path.realpath(sys.executable)  # the real interpreter: a venv under /tmp is not in the sandbox
    server = {"command": python, "args": ["tools/srv.py"], "cwd": "."}
    configure(project, {"mcp_servers": {"srv": server if sandboxed is None else {**server, "sandbox": sandboxed}}})
    run_cli(project, arreio_env, "mcp", "list", timeout=60)
    try:
        assert outside.exists() is (sandboxed is False)
    finally:
        outside.unlink(missing_ok=True)

"""An MCP server whose every tool the run excludes is not started (each run paid its start-up, ~2 s, for
tools nobody could call); one with a tool that may pass is. Real processes: the server's command
leaves a mark when it starts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.families.conftest import MCP_SERVER, configure

pytestmark = pytest.mark.slow


def _marked_server(work: Path) -> dict:
    return {
        "command": "/bin/sh",
        "args": ["-c", f'echo started >> "{work}/started.txt"; exec "{sys.executable}" "{MCP_SERVER}"'],
    }


def test_a_server_whose_tools_are_all_excluded_is_not_started(tmp_path: Path, arreio_env: dict) -> None:
    configure(tmp_path, {"mcp_servers": {"fx": _marked_server(tmp_path)}})
    for args in (["--no-tools", "fx__*"], ["--tools", "read_file,list_dir"]):
        done = run_cli(tmp_path, arreio_env, "run", "say hi", "--offline", *args)
        assert done.returncode == 0, done.stderr
        assert "warning" not in done.stderr  # left out on purpose: nothing to warn about
        assert not (tmp_path / "started.txt").exists(), args
    configure(tmp_path, {"mcp_servers": {"fx": _marked_server(tmp_path)}, "tools_disabled": ["fx__*"]})
    assert run_cli(tmp_path, arreio_env, "run", "say hi", "--offline").returncode == 0
    assert not (tmp_path / "started.txt").exists()
    # a tool of it may pass: started
    configure(tmp_path, {"mcp_servers": {"fx": _marked_server(tmp_path)}})
    done = run_cli(tmp_path, arreio_env, "run", "say hi", "--offline", "--tools", "list_dir,fx__echo")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "started.txt").read_text() == "started\n"


def test_whether_selectors_exclude_a_namespace() -> None:
    from arreio.engine.features.resolver import excludes_namespace

    assert excludes_namespace("fx__", None, ["fx__*"]) and excludes_namespace("fx__", None, ["*"])
    assert excludes_namespace("fx__", ["read_file", "read_*"], [])
    assert not excludes_namespace("fx__", None, ["fx__echo", "*status"])  # some of it may pass
    assert not excludes_namespace("fx__", ["*status"], [])  # on doubt, started
    assert not excludes_namespace("fx__", ["fx__echo"], []) and not excludes_namespace("fx__", ["f*"], [])

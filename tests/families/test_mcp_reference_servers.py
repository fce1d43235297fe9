"""The official reference servers (`mcp-server-time`, `mcp-server-git` from PyPI) against a real
`arreio run`: the sequence that used to stop (git status / add / status / status / status) passes,
stderr stays clean, and the servers' readOnlyHint annotations reach `arreio mcp list --json`.

They are installed into a temporary virtualenv of their own (they pin their own `mcp`); where that
cannot be done — no registry, no `venv` — the tests skip, saying why."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.families.conftest import configure, script

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # a pip install, then real server processes

PACKAGES = ["mcp-server-time", "mcp-server-git"]


@pytest.fixture(scope="module")
def reference_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("reference-mcp") / "venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *PACKAGES], check=True,
                       capture_output=True, timeout=240)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        detail = getattr(error, "stderr", b"") or b""
        pytest.skip(f"cannot install {', '.join(PACKAGES)}: {error} {detail.decode(errors='replace')[-300:]}")
    return venv / "bin"


def _git_repo(work: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True)

    git("init", "-q", ".")
    git("config", "user.email", "t@example.invalid")
    git("config", "user.name", "t")
    (work / "a.txt").write_text("one\n")
    git("add", "a.txt")
    git("commit", "-qm", "init")
    (work / "a.txt").write_text("one\ntwo\n")


def test_status_add_status_status_status_passes_with_clean_stderr(
    project: Path, reference_bin: Path, arreio_env, arreio_cmd
) -> None:
    _git_repo(project)
    configure(project, {"mcp_servers": {
        "time": {"command": str(reference_bin / "mcp-server-time")},
        "git": {"command": str(reference_bin / "mcp-server-git"), "args": ["--repository", "."]},
    }})
    status = {"name": "git__git_status", "arguments": {"repo_path": "."}}
    add = {"name": "git__git_add", "arguments": {"repo_path": ".", "files": ["a.txt"]}}
    now = {"name": "time__get_current_time", "arguments": {"timezone": "UTC"}}
    replies = [{"tool_calls": [c]} for c in (status, add, status, status, status, now)] + [{"text": "done"}]
    cmd = arreio_cmd + ["run", "--goal", "GOAL.md", "--json", "--yes", "--script", script(project, replies)]
    done = subprocess.run(cmd, cwd=project, env=arreio_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    ends = [json.loads(line) for line in done.stdout.splitlines() if '"tool_end"' in line]
    assert [e["is_error"] for e in ends] == [False] * 6
    assert ends[1]["preview"].startswith("Files staged")

    listing = subprocess.run(arreio_cmd + ["mcp", "list", "--json"], cwd=project, env=arreio_env,
                             capture_output=True, text=True, timeout=120)
    tools = {t["name"]: t for s in json.loads(listing.stdout)["servers"] for t in s["tools"]}
    assert tools["git__git_status"]["read_only"] and not tools["git__git_add"]["read_only"]
    assert "repo_path" in tools["git__git_status"]["input_schema"]["properties"]
    assert tools["time__get_current_time"]["description"]

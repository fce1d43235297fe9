"""The official reference servers (`mcp-server-time`, `mcp-server-git`, `mcp-server-fetch` from PyPI)
against a real `arreio run`: the sequence that used to stop (git status / add / status / status /
status) passes, stderr stays clean, the servers' readOnlyHint annotations reach `arreio mcp list
--json`, servers without resources get no resource tools, and mcp-server-fetch's prompt is a run's
goal (`--mcp-prompt fetch/fetch --arg url=…`) — fetching only from a loopback http.server.

They are installed into a virtualenv of their own (they pin their own `mcp`), made once and reused
from a cache folder (`$ARREIO_TEST_CACHE`, default ~/.cache/arreio-tests); where that cannot be done
— no registry, no `venv` — the tests skip, saying why. They are marked `network` and run only when
asked: `pytest -m network`."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from tests.families.conftest import configure, reply, script

# a pip install from PyPI (once), then real server processes: out of the default run (`pytest -m network`)
pytestmark = [pytest.mark.timeout(300), pytest.mark.slow, pytest.mark.network]

PACKAGES = ["mcp-server-time", "mcp-server-git", "mcp-server-fetch"]


def _cache_root() -> Path:
    """Outside the tests' isolated HOME, so the venv survives between sessions."""
    if os.environ.get("ARREIO_TEST_CACHE"):
        return Path(os.environ["ARREIO_TEST_CACHE"])
    return Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "arreio-tests"


@pytest.fixture(scope="module")
def reference_bin() -> Path:
    key = hashlib.sha256(f"{sys.version_info[:2]} {' '.join(PACKAGES)}".encode()).hexdigest()[:12]
    venv = _cache_root() / f"reference-mcp-{key}"
    done = venv / "installed.ok"
    try:
        venv.parent.mkdir(parents=True, exist_ok=True)
        with open(venv.parent / f"{venv.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # two sessions at once install it once
            if not done.exists():
                subprocess.run(
                    [sys.executable, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True, timeout=120
                )
                subprocess.run(
                    [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *PACKAGES],
                    check=True,
                    capture_output=True,
                    timeout=240,
                )
                done.write_text(" ".join(PACKAGES) + "\n")
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
    configure(
        project,
        {
            "mcp_servers": {
                "time": {"command": str(reference_bin / "mcp-server-time")},
                # `cwd: .`: the user's choice to start it in the working directory (the model passes "." paths);
                # `sandbox: false`: and outside the sandbox, where it may write .git (git add)
                "git": {
                    "command": str(reference_bin / "mcp-server-git"),
                    "args": ["--repository", "${ARREIO_WORKDIR}"],
                    "cwd": ".",
                    "sandbox": False,
                },
            }
        },
    )
    status = {"name": "git__git_status", "arguments": {"repo_path": "."}}
    add = {"name": "git__git_add", "arguments": {"repo_path": ".", "files": ["a.txt"]}}
    now = {"name": "time__get_current_time", "arguments": {"timezone": "UTC"}}
    replies = [{"tool_calls": [c]} for c in (status, add, status, status, status, now)] + [{"text": "done"}]
    cmd = arreio_cmd + ["run", "--goal", "GOAL.md", "--json", "--yes", "--script", script(project, replies)]
    done = subprocess.run(cmd, check=False, cwd=project, env=arreio_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    ends = [json.loads(line) for line in done.stdout.splitlines() if '"tool_end"' in line]
    assert [e["is_error"] for e in ends] == [False] * 6
    assert ends[1]["preview"].startswith("Files staged")

    listing = subprocess.run(
        arreio_cmd + ["mcp", "list", "--json"],
        check=False,
        cwd=project,
        env=arreio_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    tools = {t["name"]: t for s in json.loads(listing.stdout)["servers"] for t in s["tools"]}
    assert tools["git__git_status"]["read_only"] and not tools["git__git_add"]["read_only"]
    assert "repo_path" in tools["git__git_status"]["input_schema"]["properties"]
    assert tools["time__get_current_time"]["description"]

    # the reference servers list no resources: no resource tools for them
    assert not any(name.endswith(("__list_resources", "__read_resource")) for name in tools)


PAGE = (
    "<html><head><title>Release notes</title></head>"
    "<body><h1>Release 7</h1><p>The kettle now whistles.</p></body></html>"
)


def test_fetch_servers_prompt_is_the_goal_and_its_tool_reads_a_loopback_page(
    project: Path, reference_bin: Path, arreio_env, arreio_cmd, local_server
) -> None:
    local_server.routes["/notes"] = reply(200, PAGE)
    url = local_server.url + "/notes"
    configure(
        project,
        {
            "mcp_servers": {
                "fetch": {
                    "command": str(reference_bin / "mcp-server-fetch"),
                    "args": ["--ignore-robots-txt", "--allow-private-ips"],
                }
            }
        },
    )

    def arreio(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            arreio_cmd + list(args),
            check=False,
            cwd=project,
            env=arreio_env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    replies = [{"tool_calls": [{"name": "fetch__fetch", "arguments": {"url": url}}]}, {"text": "read"}]
    done = arreio(
        "run",
        "--json",
        "--yes",
        "--mcp-prompt",
        "fetch/fetch",
        "--arg",
        f"url={url}",
        "--script",
        script(project, replies),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    session = next((project / ".arreio" / "sessions").glob("*.jsonl")).read_text()
    first_user = next(json.loads(line) for line in session.splitlines() if '"role":"user"' in line)
    assert "The kettle now whistles." in json.dumps(first_user)  # the rendered prompt, fetched, is the goal
    end = next(json.loads(line) for line in done.stdout.splitlines() if '"tool_end"' in line)
    assert not end["is_error"] and end["preview"] == f"Contents of {url}:"
    tool = next(
        json.loads(line)
        for line in session.splitlines()
        if "fetch__fetch" in line and "call_0_0" in line and '"tool"' in line
    )
    assert "The kettle now whistles." in json.dumps(tool)  # the tool read the same page
    assert all(path == "/notes" for path, _ in local_server.requests)  # loopback only, no robots.txt

    # its listed arguments are read: a missing required one is bad usage before the server is asked
    missing = arreio("run", "--offline", "--mcp-prompt", "fetch/fetch")
    assert missing.returncode == 2 and "prompt fetch/fetch needs --arg url=…" in missing.stderr

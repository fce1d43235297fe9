"""The real-model set's server: llama-server with the 0.5B model from the cache that
`tests/realmodel/prepare.py` fills, on a free loopback port — or every test skipped with the reason.

Opt-in: `pytest -m realmodel -p no:xdist` (pyproject deselects the marker by default). One server per
session (one slot, so the prompt prefix the tests share stays cached); `ARREIO_REALMODEL_URL` points
the set at a server already running (`prepare.py --serve`) instead. `ARREIO_REALMODEL=1.5b` takes the
1.5B model.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ARREIO
from tests.realmodel import prepare

SPEC = prepare.MODELS[os.environ.get("ARREIO_REALMODEL", "0.5b")]
# Read at import, before the suite's autouse fixture moves HOME into a temp folder.
URL = os.environ.get("ARREIO_REALMODEL_URL")
WHY_NOT = None if URL else prepare.missing(SPEC)
LOGS = prepare.CACHE / "logs"
# A reply cap for every run: a small model that falls into a loop writes until the cap (8192 by
# default, about an hour at the 2 tokens/s of a busy CPU); the runs here need a few hundred.
MAX_TOKENS = 768


@dataclass
class Server:
    url: str  # base URL with /v1
    model: str  # arreio's model string
    proc: subprocess.Popen | None = None
    log: Path | None = None


@pytest.fixture(scope="session")
def llama() -> Iterator[Server]:
    """The session's server (skips every test with the reason when there is none)."""
    if WHY_NOT:
        pytest.skip(f"realmodel: {WHY_NOT}")
    if URL:
        yield Server(URL, f"openai/{SPEC.name}")
        return
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"server-{os.getpid()}.log"
    proc, url = prepare.start_server(SPEC, log=log)
    try:
        yield Server(url, f"openai/{SPEC.name}", proc, log)
    finally:
        prepare.stop_server(proc)


def start_own(port: int | None = None, **kwargs) -> Server:
    """A server of the test's own (one it may kill), skipping with the reason when it cannot be had."""
    why = prepare.missing(SPEC)
    if why:
        pytest.skip(f"realmodel: {why}")
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"own-{os.getpid()}-{time.monotonic_ns()}.log"
    proc, url = prepare.start_server(SPEC, port, log=log, **kwargs)
    return Server(url, f"openai/{SPEC.name}", proc, log)


@dataclass
class Project:
    """A scratch project with its own HOME, where `arreio` runs against the server."""

    root: Path
    home: Path
    server: Server
    env: dict[str, str] = field(default_factory=dict)

    def config(self, text: str = "", max_tokens: int = MAX_TOKENS) -> None:
        """The project's config: `text` after a reply cap (`max_tokens`)."""
        folder = self.root / ".arreio"
        folder.mkdir(exist_ok=True)
        (folder / "config.yaml").write_text(f"max_tokens: {max_tokens}\n{text}")

    def run(self, *args: str, timeout: float = 1800) -> Result:
        """`arreio run --json --yes --model openai/<name> ARGS…`: its events, exit code, stderr, seconds."""
        argv = [*ARREIO, "run", "--json", "--yes", "--model", self.server.model, *args]
        started = time.monotonic()
        done = subprocess.run(
            argv,
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return Result(done.returncode, _events(done.stdout), done.stderr, time.monotonic() - started)


@dataclass
class Result:
    code: int
    events: list[dict]
    stderr: str
    seconds: float

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e.get("type") == kind]

    @property
    def done(self) -> dict:
        found = self.of("done")
        assert found, f"no done event (exit {self.code}); stderr:\n{self.stderr[-3000:]}"
        return found[-1]

    def warnings(self) -> list[str]:
        return [e.get("code") or "" for e in self.of("warning")]

    def story(self) -> str:
        """What happened, for an assertion's message."""
        lines = [f"exit {self.code} in {self.seconds:.0f} s"]
        for e in self.events:
            if e.get("type") in ("tool_start", "tool_end", "warning", "gate_result", "retry", "compaction", "done"):
                lines.append(json.dumps(e, ensure_ascii=False)[:300])
        return "\n".join(lines + ["stderr:", self.stderr[-2000:]])


def _events(stdout: str) -> list[dict]:
    events = []
    for line in stdout.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def env_for(home: Path, server: Server) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARREIO_", "OPENAI_", "ANTHROPIC_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        OPENAI_BASE_URL=server.url,
        OPENAI_API_KEY="local",
        NO_COLOR="1",
    )
    return env


@pytest.fixture
def project(tmp_path: Path, llama: Server) -> Project:
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    made = Project(root, home, llama, env_for(home, llama))
    made.config()
    return made

"""Shared test wiring: a runner over a real session file and real built-in tools, with fakes for the
model (ScriptedProvider) and time (FixedClock)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# The suite starts hundreds of Python processes, and each of them compiles every arreio module it
# imports when no bytecode is cached (+0.27 s CPU for one `arreio run`). A machine that sets
# PYTHONDONTWRITEBYTECODE (as CI images do) never caches it: the test processes write it here, once,
# for the programs they start to read.
sys.dont_write_bytecode = False

from arreio.engine.core.config import Settings
from arreio.engine.core.model_io import SystemBlock
from arreio.engine.core.ports import Provider
from arreio.engine.loop.runner import Runner
from arreio.engine.providers.testing import FixedClock
from arreio.engine.session.file import Session, SessionHeader
from arreio.engine.tools.base import Tool
from arreio.engine.tools.builtin import builtin_tools
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext
from tests.rewrite_ahead import rewrite_ahead
from tests.warm_client import warm_command

REPO = Path(__file__).resolve().parent.parent


def lacks(module: str) -> bool:
    """Whether `module` is not installed, found without importing it: a test module's
    `pytest.importorskip` imports at collection, in every worker (ray ~0.3 s of CPU)."""
    from importlib.util import find_spec

    return find_spec(module) is None


# Property tests judge what a function returns, never how long an example took: hypothesis's default
# 200 ms deadline (and its too-slow health check) failed an example on a busy machine, not a bug.
hypothesis_settings.register_profile("arreio", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("arreio")

# A developer's own provider keys never reach a test: with no model configured, a set key makes a run
# use that provider (registry.model_for), and tests never talk to anything beyond loopback.
for _var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
    os.environ.pop(_var, None)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown under `-p no:xdist`
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than cores. Much of the suite waits (on processes it started, on
    servers, on a signal to arrive); the extra worker fills that wait with work. More cost more than
    they fill: each worker collects the suite and imports what its tests import (docs/benchmarks.md,
    "The test suite")."""
    return (os.cpu_count() or 1) + 1


def _spread_slow_first(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """`items` reordered so each worker's share starts with slow modules.

    pytest-xdist (`--dist worksteal`) hands worker k the k-th of `workers` equal runs of the list, and
    an idle worker steals from the end of another's queue. A module marked `slow` (real processes,
    clusters, signals) met near the end kept its worker busy for tens of seconds while the others
    had finished. Here the modules holding slow tests, whole (their module fixtures start once), are
    dealt to the workers largest first, each to the least loaded, and start their worker's run; the
    quick tests fill the rest, in their order."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.module.__name__ if item.module else item.nodeid, []).append(item)
    slow = [(sum(bool(item.get_closest_marker("slow")) for item in group), group) for group in modules.values()]
    slow = sorted(((count, group) for count, group in slow if count), key=lambda pair: -pair[0])
    slow_ids = {id(item) for _, group in slow for item in group}
    quick = iter([item for item in items if id(item) not in slow_ids])
    bins: list[list[pytest.Item]] = [[] for _ in range(workers)]
    weight = [0] * workers
    for count, group in slow:
        k = weight.index(min(weight))
        bins[k].extend(group)
        weight[k] += count
    ordered: list[pytest.Item] = []
    remaining = len(items)
    for k in range(workers):  # the sizes xdist's first hand-out gives each worker
        share = remaining // (workers - k)
        ordered.extend(bins[k])
        ordered.extend(item for _, item in zip(range(share - len(bins[k])), quick))
        remaining -= share
    ordered.extend(quick)
    return ordered


def pytest_configure(config: pytest.Config) -> None:
    """The controller of a parallel run rewrites the test modules' asserts once, before its workers
    collect them (tests/rewrite_ahead.py)."""
    in_controller = getattr(config, "workerinput", None) is None  # pytest-xdist's, or a run without workers
    workers = config.getoption("numprocesses", None) or 0
    if in_controller and workers > 0 and config.getoption("assertmode") == "rewrite":
        rewrite_ahead(config, REPO / "tests")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """A pytest-xdist worker's last step: its objects leave the collector's reach. The interpreter's
    exit then frees them without a last full collection over millions of objects (the suite's
    items, reports and fixtures), which kept the run waiting ~4 s for its workers to end."""
    if getattr(config, "workerinput", None) is not None:
        import gc

        gc.freeze()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    workers = getattr(config, "workerinput", {}).get("workercount", 1)  # set in a pytest-xdist worker only
    if workers > 1:
        items[:] = _spread_slow_first(items, workers)


def make_runner(
    tmp_path: Path,
    provider: Provider,
    *,
    extra_tools: list[Tool] = (),
    settings: Settings | None = None,
    clock: FixedClock | None = None,
    session: Session | None = None,
    hooks: list | None = None,
    model: str = "offline",
) -> Runner:
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    header = SessionHeader(
        id="s-test",
        created_at="2026-06-27T16:00:00.000Z",
        cwd=str(work),
        model="offline",
        system=[SystemBlock(name="identity", text="You are a test agent.")],
    )
    session = session or Session.create(tmp_path / "sessions", header)
    tools = ToolRegistry(builtin_tools())
    for tool in extra_tools:
        tools.register(tool)
    clock = clock or FixedClock()
    ctx = RunContext(
        cwd=work,
        env={"PATH": os.environ.get("PATH", "")},
        clock=clock,
        settings=settings or Settings(),
        state_dir=tmp_path,
        session_id=session.id,
        session_path=session.path,
    )
    return Runner(
        provider=provider, model=model, session=session, tools=tools, ctx=ctx, system=header.system, hooks=hooks or []
    )


async def drain(runner: Runner, text: str | None = "do the thing") -> list:
    return [event async for event in runner.run(text)]


def unit_end(events: list):
    """The runner's own `unit_end` (the unit's outcome: verdict, exit code, message, final text)."""
    return next(e for e in reversed(events) if e.type == "unit_end" and e.agent is None)


ARREIO_VARS = ("ARREIO_HOME", "ARREIO_MODEL", "ARREIO_MAX_STEPS", "ARREIO_BASE_URL", "ARREIO_THINKING")


def isolate(monkeypatch: pytest.MonkeyPatch, home: Path, work: Path | None = None) -> None:
    """HOME (and so the user config) at `home`, no ARREIO_* setting leaking in; move into `work`."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for var in ARREIO_VARS:
        monkeypatch.delenv(var, raising=False)
    if work is not None:
        monkeypatch.chdir(work)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test runs with HOME, the user config and the working directory in a fresh temp folder,
    and no ARREIO_* setting of the developer's: no test can read or write the real ~/.config, ~/.arreio
    or the checkout it runs from. Tests that need a project folder move into it (`isolate`)."""
    root = tmp_path_factory.mktemp("isolated")
    (root / "cwd").mkdir()
    isolate(monkeypatch, root / "home", root / "cwd")
    return root


@contextmanager
def signal_handlers_kept() -> Iterator[None]:
    """Inside, anything may set the process's Ctrl-C and SIGTERM handling; after, it is as before."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            if signal.getsignal(sig) is not handler and handler is not None:
                signal.signal(sig, handler)


@pytest.fixture(autouse=True)
def signals_as_found() -> Iterator[None]:
    """Every test leaves the test process's Ctrl-C and SIGTERM handling as it found it. The CLI run
    in-process sets Ctrl-C to be ignored once a run was cancelled (its process is about to exit), and
    an ignored signal is inherited by every process started later: a Ray cluster started by a later
    test in the same worker then ignored the Ctrl-C that stops an attempt, and Ray killed it outright,
    its setup left running. (A module fixture that changes them keeps them itself: `signal_handlers_kept`.)"""
    with signal_handlers_kept():
        yield


def goal_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, goal: str) -> Path:
    """A fresh working folder `tmp_path/work` holding GOAL.md, HOME isolated, the test moved into it."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "GOAL.md").write_text(goal)
    isolate(monkeypatch, tmp_path / "home", folder)
    return folder


@pytest.fixture
def in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder, isolated, that the test runs in; `.arreio/` exists."""
    work = tmp_path / "project"
    (work / ".arreio").mkdir(parents=True)
    isolate(monkeypatch, tmp_path / "home", work)
    return work


def cli_env(home: Path) -> dict[str, str]:
    """An environment for `arreio` as a real process: HOME/XDG at `home`, so no user config leaks in,
    and no ARREIO_* setting of the developer's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARREIO_")}
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture
def arreio_env(tmp_path: Path) -> dict[str, str]:
    """An environment for subprocess runs: isolated HOME/XDG so no user config leaks in."""
    return cli_env(tmp_path / "home")


# `arreio` as a real process: this interpreter, this checkout, through the console script's own entry
# (`cli/launch.py`: its early Ctrl-C handler and start-up collector settings, as a user's `arreio`).
# Every test that starts one starts this: through `run_cli` (output captured), or as the argv of its
# own Popen or terminal.
ARREIO = (sys.executable, "-m", "arreio.cli.launch")


@pytest.fixture
def arreio_cmd() -> list[str]:
    return list(ARREIO)


@pytest.fixture
def cli():
    """`cli(*args)` runs `arreio ARGS` in-process (typer's CliRunner) and returns its result; exceptions propagate."""
    from typer.testing import CliRunner  # the CLI is imported only by the tests that use it

    from arreio.cli.app import app

    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, list(args), catch_exceptions=False)

    return invoke


def run_cli(
    work: Path | None,
    env: dict[str, str],
    *args: str | bytes,
    text: bool = True,
    timeout: float = 120,
    input: str | bytes | None = None,
    fresh: bool = False,
    under: Sequence[str] = (),
) -> subprocess.CompletedProcess:
    """`arreio ARGS` as a real process in `work`, its output captured (`text=False`: as bytes); stdin is
    `input` piped in, else closed. Never raises for an exit code. It starts warm (tests/warm_client.py: a
    fork of a server that has imported the CLI and the engine) unless `fresh` asks for a cold start
    (start-up itself is what the test is about) or the warm client says it must. `under`: a program
    it runs under, as a shell would start it (`prlimit --fsize=1000 --`)."""
    stdin = {"stdin": subprocess.DEVNULL} if input is None else {"input": input}
    argv = (None if fresh else warm_command(env)) or [*ARREIO]
    return subprocess.run(
        [*under, *argv, *args], cwd=work, env=env, capture_output=True, text=text, timeout=timeout, check=False, **stdin
    )


def _ctrl_c_reaches_the_child() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


# Popen(..., **INTERRUPTIBLE) for a child a test sends SIGINT to. A shell runs background jobs (`cmd &`,
# as a CI runner may) with SIGINT ignored, children inherit that, and Python then never turns Ctrl-C
# into KeyboardInterrupt; the child must start with the default disposition, as from a terminal.
INTERRUPTIBLE = {"preexec_fn": _ctrl_c_reaches_the_child}

# A scripted answer about 7 s long, streamed two characters at a time: a run to signal mid-answer.
SLOW_SCRIPT = '- text: "slow slow slow slow slow slow slow slow"\n  chunk_chars: 2\n  delay_s: 0.3\n'


def signalled_mid_answer(work: Path, env: dict[str, str], sig: int, *args: str) -> tuple[int, str, str]:
    """`arreio run x --script <SLOW_SCRIPT> ARGS` in `work`, sent `sig` once its session exists and
    its answer is streaming; returns (exit code, stdout, stderr)."""
    (work / "s.yaml").write_text(SLOW_SCRIPT)
    proc = subprocess.Popen(
        [*ARREIO, "run", "x", "--script", "s.yaml", *args],
        cwd=work,
        env=env,
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **INTERRUPTIBLE,
    )
    deadline = time.monotonic() + 30
    while not list((work / ".arreio" / "sessions").glob("*.jsonl")):  # the run has started
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    time.sleep(1.0)  # in the middle of the answer
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    return proc.returncode, out, err


@contextmanager
def fifos_unblocked(root: Path, every_s: float = 0.3) -> Iterator[list[Path]]:
    """Inside, every FIFO under `root` is opened and closed for writing every `every_s` seconds, so a
    read that old code blocked on returns (the test then fails on what it got) instead of hanging
    the suite. Yields the FIFOs it found a reader on: a code that opened one (and so waited for a
    writer) is caught by that, whatever the machine's load — not by how long it took."""
    done = threading.Event()
    opened: list[Path] = []

    def loop() -> None:
        while not done.wait(every_s):
            for fifo in (p for p in root.rglob("*") if p.is_fifo()):
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:  # no reader at this instant
                    continue
                opened.append(fifo)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield opened
    finally:
        done.set()
        thread.join()

"""A run that fails mid-way still ends its stream in `done` (docs/architecture.md section 3): an
`ArreioError` raised by a hook, in a tool round or when a plan unit's model is built is a failed run
(its exit code, its message), and the caller is given `done` as the last event — never a stream that
stops short while the events file on disk holds the end. Any other exception (a bug) also ends the
stream in `done` (failed, 1); the exception then goes on to the caller, after `done`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from arreio.engine.core.errors import ConfigError
from arreio.engine.core.model_io import ModelRequest, StreamEvent, TextChunk
from arreio.engine.features.defaults import engine_features
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import RunHook
from arreio.engine.providers.testing import FixedClock, ScriptedProvider, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_pipeline

CALL = {"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]}


def _options(work: Path, **extra: Any) -> RunOptions:
    work.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work.parent / "home")}
    return RunOptions(goal_text="# Look around\n", cwd=work, env=env, yes=True, **extra)


class _Refuses(RunHook):
    """A hook that fails the run the first time a tool call comes to it."""

    async def before_tool(self, turn, call):
        raise ConfigError("the hook's settings went missing mid-run")


class _RefusingFeature(Feature):
    name = "refusing"

    def hooks(self, ctx):
        return [_Refuses()]


class _Breaks:
    """A provider that streams a little, then raises (a bug in an adapter)."""

    name = "breaks"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield TextChunk(text="half an ans")
        raise RuntimeError("the adapter tripped")


def _drain(options: RunOptions, deps: PipelineDeps) -> tuple[list, BaseException | None]:
    seen: list = []

    async def go() -> None:
        async for event in run_pipeline(options, deps):
            seen.append(event)

    try:
        asyncio.run(go())
    except Exception as error:  # noqa: BLE001 - what went on after the stream, for the test to look at
        return seen, error
    return seen, None


def _recorded(work: Path, seen: list) -> list[dict]:
    path = work / ".arreio" / "runs" / seen[0].run_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_error_from_a_hook_in_a_tool_round_ends_the_stream_in_done(tmp_path: Path) -> None:
    provider = ScriptedProvider([CALL, {"text": "never reached"}])
    deps = PipelineDeps(
        clock=FixedClock(), provider_factory=provider_factory(provider), features=engine_features(_RefusingFeature())
    )
    work = tmp_path / "work"
    seen, raised = _drain(_options(work), deps)
    assert raised is None  # an expected failure is a failed run, told by its `done`
    done = seen[-1]
    assert done.type == "done" and done.verdict == "failed" and done.exit_code == 5
    assert done.message == "the hook's settings went missing mid-run"
    assert [e["type"] for e in _recorded(work, seen)] == [e.type for e in seen]  # given what was recorded
    report = json.loads((work / done.report_path).read_text())
    assert (report["verdict"], report["exit_code"]) == ("failed", 5)


def test_a_bug_mid_stream_ends_the_stream_in_done_then_goes_on(tmp_path: Path) -> None:
    deps = PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(_Breaks()))
    work = tmp_path / "work"
    seen, raised = _drain(_options(work), deps)
    assert isinstance(raised, RuntimeError) and str(raised) == "the adapter tripped"
    done = seen[-1]
    assert done.type == "done" and done.verdict == "failed" and done.exit_code == 1
    assert done.message == "internal error: RuntimeError: the adapter tripped"
    assert [e["type"] for e in _recorded(work, seen)] == [e.type for e in seen]


def test_the_library_api_gets_the_failed_result_of_a_unit_whose_model_cannot_be_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arreio.api.run_to_result` reads the run's `done`: a plan whose second unit names a model
    without its key fails there (5), after the first unit's work."""
    from arreio.api import run_to_result

    work = tmp_path / "work"
    work.mkdir()
    (work / "plan.yaml").write_text(
        "units:\n  - id: a\n    goal: Say hi.\n  - id: b\n    goal: Say more.\n    model: anthropic/claude-sonnet-4-5\n"
    )
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home")}
    result = asyncio.run(run_to_result(None, cwd=work, plan=work / "plan.yaml", model="offline", env=env))
    assert (result.verdict, result.exit_code) == ("failed", 5)
    assert "needs an API key" in result.message


@pytest.mark.slow
def test_arreio_run_json_ends_in_done_when_a_unit_fails_mid_run(tmp_path: Path, arreio_env) -> None:
    """`--json`: the last line on stdout is the run's `done` (failed, 5), the process exits 5, and
    stderr says why in one line."""
    (tmp_path / "plan.yaml").write_text(
        "units:\n  - id: a\n    goal: Say hi.\n  - id: b\n    goal: Say more.\n    model: anthropic/claude-sonnet-4-5\n"
    )
    env = {k: v for k, v in arreio_env.items() if k != "ANTHROPIC_API_KEY"}
    proc = _python(
        ["-m", "arreio.cli.launch", "run", "--plan", "plan.yaml", "--model", "offline", "--json"], tmp_path, env
    )
    assert proc.returncode == 5, proc.stderr
    last = json.loads(proc.stdout.splitlines()[-1])
    assert (last["type"], last["verdict"], last["exit_code"]) == ("done", "failed", 5)
    assert [json.loads(line)["type"] for line in proc.stdout.splitlines()].count("unit_end") == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("arreio: error: model 'anthropic/claude-sonnet-4-5' needs an API key")


BREAKING_RUN = """
import sys
from arreio.cli import app, deps
from arreio.engine.providers.testing import provider_factory
from tests.conveyor.test_error_done import _Breaks

made = deps.pipeline_deps
def with_a_breaking_provider():
    built = made()
    built.provider_factory = provider_factory(_Breaks())
    return built
deps.pipeline_deps = with_a_breaking_provider
sys.argv = ["arreio", "run", "Say hi.", "--offline"]
app.main()
"""


@pytest.mark.slow
def test_a_bug_mid_run_is_one_line_on_stderr(tmp_path: Path, arreio_env) -> None:
    """The failed `done` of a bug is not told on its own: the exception after it is, in one line."""
    repo = Path(__file__).resolve().parents[2]
    env = {**arreio_env, "PYTHONPATH": str(repo)}
    proc = _python(["-c", BREAKING_RUN], tmp_path, env)
    assert proc.returncode == 1, proc.stderr
    said = [line for line in proc.stderr.splitlines() if line.startswith("arreio:")]
    assert said == [
        "arreio: internal error: RuntimeError: the adapter tripped (set ARREIO_DEBUG=1 for the traceback)"
    ], proc.stderr
    assert "Traceback" not in proc.stderr


def _python(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """This interpreter with `args`, as a user's process: no stdin, its output captured."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        text=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=False,
    )

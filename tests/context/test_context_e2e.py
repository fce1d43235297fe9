"""End to end through the real pipeline: a long offline run that compacts (at least) twice, is
SIGKILLed mid-run in a real process, then resumed to success with every fact still known."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from arreio.engine.context.feature import ContextFeature
from arreio.engine.core.summary import is_summary, parse_summary_message
from arreio.engine.providers.testing import FixedClock, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_sync
from arreio.engine.session.file import Session
from arreio.engine.session.healing import check_pairing, heal
from tests.context.task_provider import TaskProvider, call, make_repo

REPO = Path(__file__).resolve().parents[2]
READS = 24
KILL_AT = 18


def steps(kill: bool):
    out = [call("read_file", f"NOTE: mod{n}=read", path=f"src/mod_{n:02d}.py") for n in range(READS)]
    if kill:
        out[KILL_AT] = lambda ctx: os.kill(os.getpid(), signal.SIGKILL)  # the process dies for real
    return out


CHILD = """
import sys
sys.path.insert(0, {repo!r})
from pathlib import Path
from arreio.engine.context.feature import ContextFeature
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_sync
from arreio.engine.providers.testing import provider_factory
from tests.context.test_context_e2e import steps
from tests.context.task_provider import TaskProvider
deps = PipelineDeps(provider_factory=provider_factory(TaskProvider(steps(kill=True))), features=[ContextFeature()])
goal = "# Survey\\n\\nRead every module under src/. Never edit anything."
run_sync(RunOptions(goal_text=goal, cwd=Path({work!r}), env={env!r}), deps)
"""


def test_long_run_compacts_twice_survives_a_kill_and_resumes(tmp_path: Path) -> None:
    work = tmp_path / "work"
    make_repo(work, modules=READS)
    (work / ".arreio").mkdir()
    (work / ".arreio" / "config.yaml").write_text("context:\n  window: 12000\n  prune: false\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    child = subprocess.run(
        [sys.executable, "-c", CHILD.format(repo=str(REPO), work=str(work), env=env)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    [path] = list((work / ".arreio" / "sessions").glob("*.jsonl"))
    killed, repairs = Session.open(path, repair=False)
    assert check_pairing(killed.messages) == [] and not [r for r in repairs if r.kind != "torn_tail"]
    assert is_summary(killed.messages[0]) and parse_summary_message(killed.messages[0])[1].number >= 2

    provider = TaskProvider(steps(kill=False))
    deps = PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(provider), features=[ContextFeature()])
    events = run_sync(RunOptions(resume=path.stem, cwd=work, env=env), deps)
    done = events[-1]
    assert done.type == "done" and done.verdict == "success", done.message
    final = json.loads(done.final_text.removeprefix("FINAL "))
    assert all(final.get(f"mod{n}") == "read" for n in range(READS))  # nothing the task needed was lost
    session, repairs = Session.open(path)
    assert repairs == [] and check_pairing(session.messages) == [] and heal(session.messages)[1] == []
    reports = [json.loads(p.read_text()) for p in (work / ".arreio" / "runs").glob("*/report.json")]
    resumed = next(r for r in reports if r["verdict"] == "success")
    assert resumed["peak_context_tokens"] > 0 and 0 < resumed["stable_prefix_share"] < 1
    assert len(resumed["context_tokens_before"]) == resumed["compactions"]
    artifacts = work / ".arreio" / "sessions" / path.stem
    assert (artifacts / "worklog.jsonl").is_file() and list((artifacts / "compacted").glob("*.jsonl"))

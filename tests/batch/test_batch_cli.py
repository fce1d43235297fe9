"""`arreio batch` as a real process: isolation, result rows, the summary, exit codes, failures of
every kind as rows (a failed gate, a pause for approval, a failed setup, a timeout), --json, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.batch.conftest import SAMPLE, Project, fix_add_task

pytestmark = pytest.mark.slow


def test_the_sample_suite_passes_in_isolated_copies(project: Project) -> None:
    out = project.batch(str(SAMPLE / "suite.yaml"), "-j", "2")
    assert out.returncode == 0, out.stderr
    assert "3/3 attempts · 3 passed · 0 failed · pass rate 100%" in out.stdout
    (batch,) = project.batches()
    rows = {r["task"]: r for r in project.rows(batch)}
    assert set(rows) == {"fix-add", "write-notes", "summarize"}
    fix = rows["fix-add"]
    assert (fix["verdict"], fix["passed"], fix["exit_code"], fix["attempt"], fix["tries"]) == ("success", True, 0, 1, 1)
    assert fix["gates"] == [
        {"gate": "command: python3 -c 'import calc; assert calc.add(2, 3) == 5'", "passed": True, "detail": "exit 0"}
    ]
    assert fix["steps"] == 3 and fix["tool_calls"] == 2 and fix["input_tokens"] > 0 and fix["cost_usd"] == 0.0
    for key in ("cached_tokens", "cache_share", "duration_s", "model", "started_at", "ended_at"):
        assert key in fix
    # the session and the report are in the batch folder; the run's own state folder is the attempt's
    assert (batch / fix["session"]).is_file() and (batch / fix["report"]).is_file()
    report = json.loads((batch / fix["report"]).read_text())
    assert report["verdict"] == "success" and report["run_id"] == fix["run_id"]
    assert fix["session"].startswith("attempts/fix-add/1/sessions/")
    # the suite's own workdir is never touched: the agent edited a copy
    assert (SAMPLE / "tasks" / "fix-add" / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert not (SAMPLE / "tasks" / "write-notes" / "summary.md").exists()
    summary = project.summary(batch)
    assert summary["exit_code"] == 0 and summary["pass_rate"] == 1.0 and summary["planned"] == 3
    assert not (project.root / ".arreio" / "sessions").exists()  # nothing landed in the driver's own sessions


def test_failures_are_rows_with_their_reason(project: Project) -> None:
    slow = project.script("slow.yaml", [{"text": "thinking slowly", "chunk_chars": 1, "delay_s": 0.5}])
    shell = project.script(
        "shell.yaml",
        [{"tool_calls": [{"name": "shell", "arguments": {"command": "echo hi > x.txt"}}]}, {"text": "Wrote `x.txt`."}],
    )
    suite = project.suite(
        [
            fix_add_task("ok"),
            fix_add_task("bad-gate", gates=[{"kind": "command", "command": "exit 3"}]),
            fix_add_task("bad-setup", setup="echo cannot install; exit 7"),
            {"id": "paused", "goal": "Write x.txt.", "script": shell},
            {"id": "slow", "goal": "Think.", "script": slow, "timeout_s": 1},
        ]
    )
    out = project.batch(str(suite), "-j", "2")
    assert out.returncode == 1, out.stderr
    rows = {r["task"]: r for r in project.rows()}
    assert rows["ok"]["passed"]
    assert (rows["bad-gate"]["verdict"], rows["bad-gate"]["gates"][0]["passed"]) == ("failed", False)
    assert rows["bad-setup"]["verdict"] == "error"
    assert rows["bad-setup"]["message"] == "setup failed (exit 7): cannot install"
    paused = rows["paused"]
    assert (paused["verdict"], paused["exit_code"], paused["passed"]) == ("paused", 3, False)
    assert "shell needs approval" in paused["message"]
    # not the `arreio approve ID` of a lone run: that session lives in the batch folder, its copy is gone
    assert "arreio approve" not in paused["message"] and "governance.policy" in paused["message"]
    assert (rows["slow"]["verdict"], rows["slow"]["message"]) == ("timeout", "timed out after 1 s")
    assert rows["slow"]["report"]  # the run landed its report on the way out
    summary = project.summary()
    assert summary["verdicts"] == {"success": 1, "failed": 1, "error": 1, "paused": 1, "timeout": 1}
    assert summary["tasks"]["paused"]["failures"][0].startswith("#1 paused: shell needs approval")  # said once
    assert "✗ bad-setup #1  error" in out.stdout

    # --min-pass-rate: the same batch passes when a fifth of the attempts is enough
    again = project.batch(str(suite), "--min-pass-rate", "0.2", "--filter", "ok,bad-gate")
    assert again.returncode == 0, again.stderr
    assert [r["task"] for r in project.rows()] and {r["task"] for r in project.rows()} == {"ok", "bad-gate"}


def test_repeat_gives_pass_at_k_and_json_streams_rows(project: Project) -> None:
    suite = project.suite([fix_add_task("a"), fix_add_task("b")])
    out = project.batch(str(suite), "--repeat", "2", "-j", "2", "--json")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [line["type"] for line in lines] == ["attempt"] * 4 + ["summary"]
    # compact, as `arreio run --json` writes its events: one style for every JSON Lines stream
    assert all(line.startswith('{"type":"') for line in out.stdout.splitlines()), out.stdout[:200]
    assert sorted((line["task"], line["attempt"]) for line in lines[:4]) == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    summary = lines[-1]
    assert summary["pass_at"] == {"1": 1.0, "2": 1.0} and summary["tasks"]["a"]["attempts"] == 2
    assert Path(summary["path"]) == project.batches()[-1] / "summary.json"


def test_bad_input_is_one_line_and_exit_2(project: Project) -> None:
    out = project.batch("missing.yaml")
    assert (out.returncode, out.stderr) == (2, "arreio: error: suite file not found: missing.yaml\n")
    suite = project.suite([fix_add_task("a")])
    out = project.batch(str(suite), "--filter", "zzz*")
    assert out.returncode == 2 and out.stderr.startswith("arreio: error: --filter zzz* matches no task")
    out = project.batch(str(suite), "--offline", "--model", "openai/gpt-5")
    assert out.returncode == 2 and "disagree" in out.stderr
    out = project.batch("--resume", "nope")
    assert out.returncode == 2 and "no batch nope" in out.stderr
    for odd in ("**", "/abs", "[a-"):  # an id is a prefix, never a glob (these were internal errors)
        out = project.batch("--resume", odd)
        assert out.returncode == 2 and f"no batch {odd}" in out.stderr, out.stderr
    out = project.batch()
    assert out.returncode == 2 and "nothing to run" in out.stderr
    assert "Traceback" not in out.stderr


def test_ray_missing_says_how_to_install(project: Project) -> None:
    """Without Ray, `--ray` is a configuration problem (exit 5) with the install command."""
    suite = project.suite([fix_add_task("a")])
    code = "import sys; sys.modules['ray'] = None\nfrom arreio.cli.launch import main\nmain()"
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", code, "batch", str(suite), "--ray"],
        check=False,
        cwd=project.root,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 5
    assert out.stderr == (
        "arreio: error: --ray needs Ray, which is not installed: pip install 'arreio[ray]' (or run without --ray)\n"
    )
    assert not (project.root / ".arreio" / "batches").exists()  # checked before anything was made


def test_batch_help_imports_neither_ray_nor_an_sdk(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import json, sys\nfrom typer.testing import CliRunner\nfrom arreio.cli.app import app\n"
        "result = CliRunner().invoke(app, ['batch', '--help'])\nassert result.exit_code == 0, result.output\n"
        "print(json.dumps(sorted(m for m in ('ray', 'anthropic', 'openai', 'litellm') if m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) == []


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["s.yaml", "--ray"], ("s.yaml", "local")),
        (["--ray", "s.yaml"], ("s.yaml", "local")),
        (["--ray", "-j", "2", "s.yaml"], ("s.yaml", "local")),
        (["--ray", "auto", "s.yaml"], ("s.yaml", "auto")),
        (["s.yaml", "--ray", "ray://head:10001"], ("s.yaml", "ray://head:10001")),
        (["s.yaml", "--ray", "127.0.0.1:6379"], ("s.yaml", "127.0.0.1:6379")),
        (["s.yaml"], ("s.yaml", None)),
    ],
)
def test_ray_takes_an_optional_address(args: list[str], expected: tuple) -> None:
    import typer

    from arreio.cli.commands.batch import BatchCommand, batch

    app = typer.Typer()
    app.command(cls=BatchCommand)(batch)
    command = typer.main.get_command(app)
    ctx = command.make_context("batch", list(args))
    assert (str(ctx.params["suite"]), ctx.params["ray"]) == expected


def test_replay_never_falls_back_to_a_live_model(project: Project) -> None:
    """`--replay DIR` is the $0 CI use: a task with no recording there and nothing of its own to play
    fails its attempt (the recording is missing) instead of asking the configured model; a task with
    its own script still runs from it."""
    own = fix_add_task("scripted")
    live = {
        "id": "live",
        "goal": "Make add() in calc.py add.",
        "workdir": "tasks/fix-add",
        "gates": [{"kind": "command", "command": "true"}],
    }
    (project.root / "empty").mkdir()
    out = project.batch(str(project.suite([own, live])), "--replay", "empty", "--json")
    assert out.returncode == 1, out.stderr
    rows = {r["task"]: r for r in project.rows()}
    assert rows["scripted"]["passed"]
    assert not rows["live"]["passed"] and rows["live"]["steps"] == 0
    assert "live.cassette.jsonl" in rows["live"]["message"], rows["live"]["message"]


def test_a_zero_given_on_resume_is_a_value(project: Project) -> None:
    from arreio.cli.batch_driver import BatchRequest, _merged

    stored = {"repeat": 3, "min_pass_rate": 0.8, "max_cost": 5.0, "learn": True}
    request = BatchRequest(suite=None, min_pass_rate=0.0, max_cost=0.0)
    merged = _merged(request, stored)
    assert (merged["min_pass_rate"], merged["max_cost"], merged["repeat"], merged["learn"]) == (0.0, 0.0, 3, True)


def test_a_resume_says_when_the_suite_changed_since_the_batch_began(project: Project) -> None:
    """`--resume` reads the suite again: an edit since the start silently changed the attempts still to
    run. The batch keeps the suite's sha256 and a resume says so when it differs."""
    suite = project.suite([fix_add_task("a")])
    assert project.batch(str(suite)).returncode == 0
    (batch,) = project.batches()
    same = project.batch("--resume", batch.name)
    assert same.returncode == 0 and "changed since" not in same.stderr
    project.suite([fix_add_task("a", goal="Make add() in calc.py add, and say so.")])
    changed = project.batch("--resume", batch.name)
    assert changed.returncode == 0, changed.stderr
    assert f"suite.yaml changed since batch {batch.name} started" in changed.stderr

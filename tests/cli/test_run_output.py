"""Output that fits where it goes: `--output text|live|json`, `--output-last-message`, plain
full-width lines on a pipe, a closed pipe that stops the printing and not the run, a spinner on a
terminal only, and the cost on the end line, the `done` event and `sessions list`. Pipes and
terminals are the real thing: a subprocess that reads one line and leaves, a pseudo-terminal."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from arreio.cli.app import app
from arreio.cli.render import LiveRenderer
from arreio.engine.core import events as ev
from arreio.engine.providers.testing import FixedClock, ScriptedProvider, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from arreio.engine.session.store import SessionStore
from tests.conftest import ARREIO, isolate
from tests.terminal import Terminal

LONG_PATH = "notes/" + "a-rather-long-folder-name/" * 4 + "and-a-long-file-name.md"
SCRIPT = f"""\
- text: "Let me write the notes."
  tool_calls: [{{name: write_file, arguments: {{path: "{LONG_PATH}", content: "hello"}}}}]
- text: "Wrote the notes.\\nSecond line of the answer."
"""
SLOW = """\
- text: "Looking."
  delay_s: 0.4
  tool_calls: [{name: list_dir, arguments: {path: "."}}]
- text: "Still looking."
  delay_s: 0.4
  tool_calls: [{name: list_dir, arguments: {path: "."}}]
- text: "All done."
  delay_s: 0.4
"""
WAIT = """\
- text: "Done here."
  delay_s: 2.5
"""


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    for name, text in (("s.yaml", SCRIPT), ("slow.yaml", SLOW), ("wait.yaml", WAIT)):
        (folder / name).write_text(text)
    isolate(monkeypatch, tmp_path / "home", folder)
    return folder


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def events_of(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def screen(raw: str) -> list[str]:
    """What a terminal shows after `raw`: carriage returns and erase-to-end-of-line applied."""
    lines, col = [""], 0
    for token in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r\n|.", raw, flags=re.DOTALL):
        if token in ("\n", "\r\n"):
            lines.append("")
            col = 0
        elif token == "\r":
            col = 0
        elif token == "\x1b[K":
            lines[-1] = lines[-1][:col]
        elif not token.startswith("\x1b"):
            lines[-1] = lines[-1][:col] + token + lines[-1][col + 1 :]
            col += 1
    return lines


# -- --output text / json / live -------------------------------------------------------------------
def test_output_text_prints_only_the_final_answer(work: Path) -> None:
    result = invoke("run", "Write notes", "--script", "s.yaml", "--output", "text")
    assert result.exit_code == 0, result.output
    assert result.stdout == "Wrote the notes.\nSecond line of the answer.\n"
    assert result.stderr == ""  # stderr is no terminal here, and the run succeeded: nothing to say


def test_output_text_on_a_run_that_fails_still_says_why_on_stderr(work: Path) -> None:
    (work / "bad.yaml").write_text("- error: {status: 401, message: bad key}\n")
    result = invoke("run", "Write notes", "--script", "bad.yaml", "--output", "text")
    assert result.exit_code == 5 and result.stdout == ""
    assert result.stderr.startswith("arreio: error:") and len(result.stderr.splitlines()) == 1


def test_json_is_output_json_and_done_carries_the_cost(work: Path) -> None:
    one = events_of(invoke("run", "Write notes", "--script", "s.yaml", "--json").stdout)
    (work / LONG_PATH).unlink()
    two = events_of(invoke("run", "Write notes", "--script", "s.yaml", "--output", "json").stdout)
    volatile = {"run_id", "session_id", "report_path"}
    assert [{k: v for k, v in e.items() if k not in volatile} for e in one] == [
        {k: v for k, v in e.items() if k not in volatile} for e in two
    ]
    done = two[-1]
    assert done["type"] == "done" and done["cost_usd"] == 0.0 and done["free"] is True
    assert done["cache_share"] == 0.0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--output", "yaml"), "--output must be one of live, text, json"),
        (("--json", "--output", "text"), "--json and --output text disagree"),
        (("--output-last-message", "."), "is a folder"),
    ],
)
def test_bad_output_flags_exit_2(work: Path, args, says) -> None:
    result = invoke("run", "Write notes", "--script", "s.yaml", *args)
    assert result.exit_code == 2 and says in result.stderr


def test_output_last_message_writes_the_final_answer(work: Path, tmp_path: Path, monkeypatch) -> None:
    # a missing folder is refused before the run:
    # test_output_last_message_into_a_missing_folder_is_refused_before_the_run
    (work / "out").mkdir()
    result = invoke("run", "Write notes", "--script", "s.yaml", "--json", "--output-last-message", "out/answer.txt")
    assert result.exit_code == 0, result.output
    assert (work / "out" / "answer.txt").read_text() == "Wrote the notes.\nSecond line of the answer."
    assert not [p for p in (work / "out").iterdir() if p.name != "answer.txt"]  # no temp file left behind
    # with -C, a relative FILE is read from DIR too; a run with no answer leaves the file empty, not stale
    (work / "bad.yaml").write_text("- error: {status: 401, message: bad key}\n")
    monkeypatch.chdir(tmp_path)
    result = invoke("run", "-C", str(work), "x", "--script", "bad.yaml", "--output-last-message", "out/answer.txt")
    assert result.exit_code == 5 and (work / "out" / "answer.txt").read_text() == ""


def test_live_view_on_a_pipe_is_plain_full_width_lines(work: Path) -> None:
    result = invoke("run", "Write notes", "--script", "s.yaml")
    assert result.exit_code == 0, result.output
    assert "\x1b[" not in result.stdout  # no colour, no cursor movement
    line = next(line for line in result.stdout.splitlines() if "● write_file" in line)
    # one line, not wrapped at 80 columns (each argument's own preview is capped, by design)
    assert len(line) > 100 and line.endswith(f"… ({len(LONG_PATH)} chars)', content='hello')")
    end = next(line for line in result.stdout.splitlines() if line.startswith("success"))
    assert end.startswith("success · 2 steps · 1 tool call ·") and "· $0 (offline) · report .arreio/runs/" in end


# -- cost ------------------------------------------------------------------------------------------
def test_the_end_line_says_cost_and_cache_share() -> None:
    def end_line(**fields) -> str:
        console = Console(width=300, record=True, force_terminal=False)
        LiveRenderer(console)(ev.Done(verdict="success", exit_code=0, report_path="r.json", **fields))
        return console.export_text()

    assert "· $0.036 · 62% cached · report r.json" in end_line(cost_usd=0.0361, cache_share=0.6193)
    assert "· $1.25 · 0% cached ·" in end_line(cost_usd=1.2512, cache_share=0.0)
    assert "· <$0.001 · 5% cached ·" in end_line(cost_usd=0.0004, cache_share=0.05)
    assert "· cost unknown · 10% cached ·" in end_line(cost_usd=None, cache_share=0.1)
    assert "· $0 (offline) · report" in end_line(cost_usd=0.0, cache_share=0.0, free=True)
    assert "$0 ·" not in end_line(cost_usd=None)  # an unknown price is never shown as $0


def _priced_run(work: Path, model: str) -> ev.Done:
    usage = {"input_tokens": 1000, "output_tokens": 1000, "cache_read_tokens": 3000, "cache_write_tokens": 0}
    provider = ScriptedProvider([{"text": "Done.", "usage": usage}])
    deps = PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(provider))
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work.parent / "home")}
    events = asyncio.run(run_to_end(RunOptions(goal_text="Do it", cwd=work, env=env, model=model), deps))
    return events[-1]


def test_done_and_sessions_list_carry_the_last_runs_cost(work: Path) -> None:
    priced = _priced_run(work, "anthropic/claude-sonnet-4-5")
    report = json.loads((work / priced.report_path).read_text())
    assert priced.cost_usd == report["cost_usd"] == pytest.approx(0.0189) and not priced.free
    assert priced.cache_share == pytest.approx(0.75)
    unknown = _priced_run(work, "openai/made-up-model-x")
    assert unknown.cost_usd is None and not unknown.free
    costs = {s.model: s.cost_usd for s in SessionStore(work / ".arreio" / "sessions").list()}
    assert costs == {"anthropic/claude-sonnet-4-5": pytest.approx(0.0189), "openai/made-up-model-x": None}
    listed = invoke("sessions", "list").stdout
    rows = {line.split()[3]: line for line in listed.splitlines()[1:]}
    assert "  $0.019  " in rows["anthropic/claude-sonnet-4-5"] and "  unknown  " in rows["openai/made-up-model-x"]


def test_sessions_list_on_a_pipe_keeps_every_column_whole(work: Path) -> None:
    title = "Summarise every note in the notes folder and then write a report that is long enough to be cut"
    assert invoke("run", title, "--script", "s.yaml").exit_code == 0
    listed = invoke("sessions", "list").stdout  # CliRunner's stdout is no terminal, like `| cat`
    header, row = listed.splitlines()[:2]
    assert header.split() == ["id", "created", "model", "msgs", "last", "run", "cost", "title"]
    assert row.rstrip().endswith(title) and re.search(r"  success +\$0 +Summarise", row) and "…" not in row


# -- real pipes ------------------------------------------------------------------------------------
READ_ONE_LINE = """
import subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
first = proc.stdout.readline()
proc.stdout.close()  # like `head -1`: the reader leaves while the run still prints
err = proc.stderr.read()
print(repr(first.decode()))
print(proc.wait())
sys.stderr.write(err.decode())
"""


@pytest.mark.slow
@pytest.mark.parametrize("output", ["live", "json"])
def test_a_closed_pipe_stops_the_printing_not_the_run(work: Path, arreio_env: dict, output: str) -> None:
    argv = [*ARREIO, "run", "Look around", "--script", "slow.yaml", "--output", output]
    reader = subprocess.run(
        [sys.executable, "-c", READ_ONE_LINE, *argv],
        cwd=work,
        env=arreio_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    first, code = reader.stdout.splitlines()
    assert ("run_start" if output == "json" else "arreio · offline · session") in first
    assert code == "0", reader.stderr  # the run's own exit code
    assert "Traceback" not in reader.stderr and "BrokenPipe" not in reader.stderr and "cancelled" not in reader.stderr
    (run,) = (work / ".arreio" / "runs").iterdir()
    report = json.loads((run / "report.json").read_text())
    assert report["verdict"] == "success" and report["steps"] == 3 and report["final_text"] == "All done."


# -- a real terminal -------------------------------------------------------------------------------
def terminal(work: Path, env: dict, *args: str, shell_tail: str = "") -> Terminal:
    argv = [*ARREIO, *args]
    if shell_tail:  # e.g. stderr redirected to a file while stdout stays the terminal
        argv = ["sh", "-c", 'exec "$@" ' + shell_tail, "sh", *argv]
    return Terminal(argv, cwd=work, env=env)


@pytest.mark.slow
def test_a_terminal_shows_a_spinner_while_waiting_and_it_goes(work: Path, arreio_env: dict) -> None:
    term = terminal(work, arreio_env, "run", "Say it", "--script", "wait.yaml")
    term.expect(r"waiting for the model · [12]s")
    assert term.wait() == 0, term.plain
    shown = "\n".join(screen(term.output))
    assert "waiting for the model" not in shown  # erased before the answer printed
    assert "Done here." in shown and "$0 (offline)" in shown
    assert "\x1b[" in term.output  # a terminal gets rich's colours


@pytest.mark.slow
def test_no_spinner_in_json_or_when_stderr_is_no_terminal(work: Path, arreio_env: dict) -> None:
    term = terminal(work, arreio_env, "run", "Say it", "--script", "wait.yaml", "--json")
    assert term.wait() == 0, term.plain
    assert "waiting for" not in term.output and "\x1b[" not in term.output
    assert [json.loads(line)["type"] for line in term.plain.splitlines()][-1] == "done"
    (work / "wait.yaml").write_text(WAIT)
    term = terminal(work, arreio_env, "run", "Say it", "--script", "wait.yaml", shell_tail="2>err.txt")
    assert term.wait() == 0, term.plain
    assert "waiting for" not in term.output and "waiting for" not in (work / "err.txt").read_text()


@pytest.mark.slow
def test_output_text_at_a_terminal_shows_progress_on_stderr_and_the_answer_once(work: Path, arreio_env: dict) -> None:
    term = terminal(work, arreio_env, "run", "Look around", "--script", "slow.yaml", "--output", "text")
    assert term.wait() == 0, term.plain
    shown = [line for line in screen(term.output) if line.strip()]
    assert sum("● list_dir" in line for line in shown) == 2  # progress, on stderr
    assert "Looking." not in "\n".join(shown)  # the streamed text is not shown along the way
    assert shown.count("All done.") == 1 and shown[-1].startswith("success · 3 steps")
    # with stderr elsewhere the terminal gets only the answer; stderr gets no progress
    term = terminal(
        work, arreio_env, "run", "Look around", "--script", "slow.yaml", "--output", "text", shell_tail="2>err.txt"
    )
    assert term.wait() == 0, term.plain
    assert term.plain == "All done.\n" and (work / "err.txt").read_text() == ""


@pytest.mark.slow
def test_a_slow_tool_shows_a_spinner_naming_it(work: Path, arreio_env: dict) -> None:
    (work / "tool.yaml").write_text(
        '- tool_calls: [{name: shell, arguments: {command: "sleep 2"}}]\n- text: "Slept."\n'
    )
    term = terminal(work, arreio_env, "run", "Sleep", "--script", "tool.yaml", "--yes")
    term.expect(r"running shell · 1s")
    assert term.wait() == 0, term.plain
    shown = "\n".join(screen(term.output))
    assert "running shell" not in shown and "Slept." in shown


def test_a_failed_continuation_prints_no_earlier_answer(work: Path) -> None:
    (work / "one.yaml").write_text('- text: "The first answer."\n')
    assert invoke("run", "First", "--script", "one.yaml").exit_code == 0
    result = invoke("run", "-c", "Again", "--output", "text", "--output-last-message", "last.txt")
    assert result.exit_code == 1 and "ran out" in result.stderr  # the script has no second reply
    assert result.stdout == "" and (work / "last.txt").read_text() == ""

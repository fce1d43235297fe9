"""What a new user (of `claude -p`, `codex exec`, `llm`) tripped on, through the real CLI: each is one
clear line before anything runs, or the field a script looks for."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def test_output_last_message_into_a_missing_folder_is_refused_before_the_run(tmp_path: Path, arreio_env: dict) -> None:
    missing = tmp_path / "nowhere" / "deeper" / "a.md"
    done = run_cli(tmp_path, arreio_env, "run", "say hi", "--offline", "--output-last-message", str(missing))
    assert done.returncode == 2 and "does not exist" in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "nowhere").exists() and not (tmp_path / ".arreio" / "sessions").exists()


def test_dash_p_with_a_goal_says_what_dash_p_is(tmp_path: Path, arreio_env: dict) -> None:
    done = run_cli(tmp_path, arreio_env, "run", "-p", "Fix the bug", "--offline")
    assert done.returncode == 2
    assert "-p is --plan" in done.stderr and 'arreio run "Fix the bug"' in done.stderr


def test_dash_p_before_any_command_points_to_arreio_run(tmp_path: Path, arreio_env: dict) -> None:
    """`arreio -p "Fix the bug"`, as `claude -p` takes it: the one line names `arreio run`."""
    for flag in ("-p", "--prompt", "-m"):
        done = run_cli(tmp_path, arreio_env, flag, "Fix the bug")
        assert done.returncode == 2
        hint = '(one goal, run to the end: `arreio run "GOAL"`; see `arreio --help`)'
        assert done.stderr.splitlines() == [f"arreio: error: No such option: {flag} {hint}"]
    other = run_cli(tmp_path, arreio_env, "--bogus")
    assert "arreio run" not in other.stderr


def test_a_gate_with_an_invalid_regex_is_refused_before_any_unit_runs(tmp_path: Path, arreio_env: dict) -> None:
    (tmp_path / "plan.yaml").write_text(
        "units:\n  - {id: a, goal: 'Write x.md with hello.'}\n"
        "gates:\n  - {kind: file, path: x.md, pattern: '[unclosed'}\n"
    )
    done = run_cli(tmp_path, arreio_env, "run", "--plan", "plan.yaml", "--offline")
    assert done.returncode == 2 and "plan.yaml:4: gates.0.pattern: not a valid regular expression" in done.stderr
    assert not (tmp_path / "x.md").exists() and not (tmp_path / ".arreio" / "sessions").exists()


def test_a_tool_call_ceiling_says_how_to_continue(tmp_path: Path, arreio_env: dict) -> None:
    (tmp_path / ".arreio").mkdir()
    (tmp_path / ".arreio" / "config.yaml").write_text("governance:\n  max_tool_calls: 2\n")
    calls = [
        {"tool_calls": [{"name": "list_dir", "arguments": {"path": f"{'.' if n % 2 else './'}"}}]} for n in range(4)
    ]
    (tmp_path / "s.json").write_text(json.dumps([*calls, {"text": "done"}]))
    done = run_cli(tmp_path, arreio_env, "run", "look around", "--script", "s.json", "--json")
    last = json.loads(done.stdout.splitlines()[-1])
    assert done.returncode == 4 and f"arreio run --resume {last['session_id']}" in done.stderr
    assert "governance.max_tool_calls" in done.stderr


def test_the_end_of_a_run_carries_its_session_and_one_object_says_the_result(tmp_path: Path, arreio_env: dict) -> None:
    events = run_cli(tmp_path, arreio_env, "run", "list the files", "--offline", "--json").stdout.splitlines()
    first, last = json.loads(events[0]), json.loads(events[-1])
    assert last["type"] == "done" and last["session_id"] == first["session_id"]
    done = run_cli(tmp_path, arreio_env, "run", "list the files", "--offline", "--output", "json-result")
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and len(lines) == 1
    result = json.loads(lines[0])
    assert result["type"] == "result" and result["verdict"] == "success" and not result["is_error"]
    assert result["result"] and result["session_id"] and result["usage"]["input_tokens"] > 0


def test_models_lists_the_readmes_example_and_says_where_prices_come_from(tmp_path: Path, arreio_env: dict) -> None:
    shown = run_cli(tmp_path, arreio_env, "models").stdout
    assert "anthropic/claude-sonnet-4-5" in shown and "as of 2025-11" in shown


def test_a_goal_the_offline_model_cannot_do_is_no_success(tmp_path: Path, arreio_env: dict) -> None:
    done = run_cli(tmp_path, arreio_env, "run", "Fix the failing test", "--offline")
    assert done.returncode == 1, done.stdout
    assert "the offline model cannot fix anything" in done.stderr and "--model" in done.stderr


def test_a_named_output_that_could_not_be_written_is_no_success(tmp_path: Path, arreio_env: dict) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n\nalpha beta\n")
    (tmp_path / "out.md").mkdir()  # where the summary should go, a folder: the write is refused
    done = run_cli(tmp_path, arreio_env, "run", "Read notes.md and write a summary to out.md", "--offline", "--json")
    last = json.loads(done.stdout.splitlines()[-1])
    assert done.returncode == 1 and last["verdict"] == "failed", done.stdout
    assert "did not do the goal" in last["message"] and "out.md" in last["message"]


def test_a_goal_the_offline_model_did_is_still_a_success(tmp_path: Path, arreio_env: dict) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n\nalpha beta\n")
    done = run_cli(tmp_path, arreio_env, "run", "Read notes.md and write a summary to out.md", "--offline")
    assert done.returncode == 0 and (tmp_path / "out.md").is_file(), done.stderr


def test_an_output_holding_something_else_is_left_alone_and_no_success(tmp_path: Path, arreio_env: dict) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n\nalpha beta\n")
    (tmp_path / "out.md").write_text("the user's own draft\n")
    done = run_cli(tmp_path, arreio_env, "run", "Read notes.md and write a summary to out.md", "--offline")
    assert done.returncode == 1 and "out.md already existed" in done.stderr, done.stdout
    assert (tmp_path / "out.md").read_text() == "the user's own draft\n"
    # the same goal where a run already wrote it: nothing to do, done
    (tmp_path / "out.md").unlink()
    assert (
        run_cli(tmp_path, arreio_env, "run", "Read notes.md and write a summary to out.md", "--offline").returncode == 0
    )
    again = run_cli(tmp_path, arreio_env, "run", "Read notes.md and write a summary to out.md", "--offline")
    assert again.returncode == 0 and "already holds what I would write" in again.stdout


def test_cd_to_a_file_says_it_is_a_file(tmp_path: Path, arreio_env: dict) -> None:
    """`-C notes.md` was "no such folder", though it exists (a file)."""
    (tmp_path / "notes.md").write_text("# notes\n")
    for command in (("run", "x", "--offline"), ("chat", "--offline")):
        done = run_cli(tmp_path, arreio_env, *command, "-C", "notes.md")
        assert done.returncode == 2
        assert done.stderr.splitlines() == ["arreio: error: --cd notes.md: a file, not a folder"]
    missing = run_cli(tmp_path, arreio_env, "run", "x", "--offline", "-C", "nowhere")
    assert missing.returncode == 2 and missing.stderr.splitlines() == ["arreio: error: --cd nowhere: no such folder"]

"""Edges a daily user meets: continuing after a ceiling, a script that resumes with its session, two
runs on one session, a state folder or cassette path that is not what it should be, bad config that
must fail before anything is created."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arreio.engine.core.errors import UsageError
from arreio.engine.session.lock import SessionLock

GOAL = "fixtures/goals/quickstart.md"


def events_of(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_the_printed_way_forward_after_a_step_ceiling_works(workdir: Path, cli) -> None:
    first = cli("run", "--goal", GOAL, "--offline", "--max-steps", "2", "--json")
    assert first.exit_code == 4
    done = events_of(first)[-1]
    command = done["message"].split("`")[1]  # "arreio run --resume <id> --max-steps N"
    assert command.startswith("arreio run --resume ")
    sid = command.split()[3]
    resumed = cli("run", "--resume", sid, "--max-steps", "10", "--offline", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert Path("build/quickstart-summary.md").exists()
    report = json.loads(Path(events_of(resumed)[-1]["report_path"]).read_text())
    assert report["goal"] == "Quickstart: summarise the project notes"  # the session's goal, not the note


def test_a_scripted_session_resumes_with_its_script(workdir: Path, cli) -> None:
    Path("s.yaml").write_text("- tool_calls: [{name: list_dir, arguments: {}}]\n- text: scripted ending\n")
    first = cli("run", "--goal", GOAL, "--script", "s.yaml", "--max-steps", "1", "--json")
    sid = events_of(first)[0]["session_id"]
    resumed = cli("run", "--resume", sid, "--json")  # no --script: the session remembers it
    assert resumed.exit_code == 0 and events_of(resumed)[-1]["final_text"] == "scripted ending"
    assert not Path("build/quickstart-summary.md").exists()  # the offline policy did not take over
    Path("s.yaml").unlink()
    again = cli("run", "--resume", sid, "--goal", GOAL)
    assert again.exit_code == 2 and "no longer exists; pass --script" in again.stderr


def test_one_run_per_session_at_a_time(workdir: Path, cli) -> None:
    first = cli("run", "--goal", GOAL, "--offline", "--max-steps", "1", "--json")
    sid = events_of(first)[0]["session_id"]
    held = SessionLock(Path(f".arreio/sessions/{sid}.jsonl")).acquire(sid)
    try:
        busy = cli("run", "--resume", sid, "--offline")
        assert busy.exit_code == 2 and "is in use by another arreio process" in busy.stderr
    finally:
        held.release()
    assert cli("run", "--resume", sid, "--offline").exit_code == 0


def test_lock_error_names_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("")
    lock = SessionLock(path).acquire("s")
    try:
        try:
            SessionLock(path).acquire("s")
        except UsageError as error:
            import os

            assert f"pid {os.getpid()}" in error.message
        else:  # pragma: no cover
            raise AssertionError("a second lock was granted")
    finally:
        lock.release()


def test_a_state_path_that_is_a_file_or_a_cassette_path_that_is_a_folder(workdir: Path, cli) -> None:
    Path(".arreio").write_text("oops")
    blocked = cli("run", "--goal", GOAL, "--offline")
    assert blocked.exit_code == 2 and ".arreio is a file" in blocked.stderr
    Path(".arreio").unlink()
    folder = cli("run", "--goal", GOAL, "--offline", "--record", "fixtures")
    assert folder.exit_code == 2 and "--record fixtures is a folder" in folder.stderr


@pytest.mark.parametrize(
    ("section", "named"),
    [
        ("governance:\n  policy:\n    - {tool: shell, match: '(', action: allow}\n", "governance"),
        ("knowledge:\n  keyword_weight: -1\n", "knowledge.keyword_weight"),
    ],
)
def test_bad_feature_config_fails_before_a_session_exists(workdir: Path, cli, section: str, named: str) -> None:
    Path(".arreio").mkdir()
    Path(".arreio/config.yaml").write_text(section)
    result = cli("run", "--goal", GOAL, "--offline")
    assert result.exit_code == 5 and named in result.stderr
    assert result.stderr.strip().endswith("(in .arreio/config.yaml)")
    assert list(Path(".arreio/sessions").glob("*.jsonl")) == []


def test_a_run_that_does_not_succeed_says_why_on_stderr(workdir: Path, cli) -> None:
    Path("out.yaml").write_text("- tool_calls: [{name: list_dir, arguments: {}}]\n")
    failed = cli("run", "--goal", GOAL, "--script", "out.yaml", "--json")
    assert failed.exit_code == 1
    assert failed.stderr.strip() == "arreio: error: the model call failed: the offline script ran out after 1 reply"
    assert all(line.startswith("{") for line in failed.stdout.splitlines())
    stopped = cli("run", "--goal", GOAL, "--offline", "--max-steps", "1")
    assert stopped.exit_code == 4 and stopped.stderr.startswith("arreio: stopped: stopped after")


def test_usage_errors_are_one_line(workdir: Path, cli) -> None:
    for args, needle in (
        (("run", "--goal", GOAL, "--bogus"), "No such option: --bogus"),
        (("learn",), "Missing option '--session'"),
        (("sessions", "doctor"), "Missing argument"),
    ):
        result = cli(*args)
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1, result.stderr
        assert lines[0].startswith("arreio: error: ") and needle in lines[0] and "--help" in lines[0]


def test_goal_quirks_bom_and_paths_with_spaces(workdir: Path, cli) -> None:
    Path("my notes").mkdir()
    Path("my notes/a b.md").write_text("# Heading\n- [ ] one\n")
    Path("G.md").write_text(
        "\ufeff# Spaced paths\n\nRead `my notes/a b.md`. Then write `out put/summary.md`.\n", encoding="utf-8"
    )
    result = cli("run", "--goal", "G.md", "--offline", "--json")
    events = events_of(result)
    assert result.exit_code == 0, result.output
    starts = [e["arguments"].get("path") for e in events if e["type"] == "tool_start"]
    assert "my notes/a b.md" in starts and "out put/summary.md" in starts
    assert "## my notes/a b.md" in Path("out put/summary.md").read_text()
    report = json.loads(Path(events[-1]["report_path"]).read_text())
    assert report["goal"] == "Spaced paths"  # no BOM, no '#'


def test_learn_refuses_a_run_that_did_not_succeed(workdir: Path, cli) -> None:
    stopped = cli("run", "--goal", GOAL, "--offline", "--max-steps", "1", "--json")
    sid = events_of(stopped)[0]["session_id"]
    result = cli("learn", "--session", sid)
    assert result.exit_code == 2 and "last run ended partial" in result.stderr


def test_config_typos_are_named_with_a_suggestion(workdir: Path, cli) -> None:
    Path(".arreio").mkdir()
    for text, needle in (
        (
            "tools: {shell_timeout: 5}\n",
            "unknown setting 'tools.shell_timeout' in .arreio/config.yaml (did you mean 'tools.shell_timeout_s'?)",
        ),
        ("max_step: 3\n", "(did you mean 'max_steps'?)"),
        # a feature's own section, nested and optional: the typo, not the key it hides
        (
            "web:\n  search: {backnd: brave}\n",
            "unknown setting 'web.search.backnd' (did you mean 'web.search.backend'?)",
        ),
        ("knowledge: {keyword_weigth: 1}\n", "(did you mean 'knowledge.keyword_weight'?) (in .arreio/config.yaml)"),
        (
            "thinking: 100\n",
            "invalid setting 'thinking' from .arreio/config.yaml: thinking budget 100 must be at least 1024",
        ),
        # every typo of the file at once (only one was named, another first)
        (
            "max_steps: 80\nbogus_key: 1\ntools: {shell_timeout: 5}\n",
            (
                "unknown settings in .arreio/config.yaml: 'tools.shell_timeout' (did you mean "
                "'tools.shell_timeout_s'?), 'bogus_key'"
            ),
        ),
    ):
        Path(".arreio/config.yaml").write_text(text)
        result = cli("run", "--goal", GOAL, "--offline")
        assert result.exit_code == 5 and needle in result.stderr


def test_curator_windows_are_checked_with_the_config(workdir: Path, cli) -> None:
    Path(".arreio").mkdir()
    Path(".arreio/config.yaml").write_text("curator: {stale_days: 100, archive_days: 10}\n")
    result = cli("run", "--goal", GOAL, "--offline")
    assert result.exit_code == 5 and "archive_days (10) must not be shorter than stale_days (100)" in result.stderr


def test_a_bad_kb_embedder_setting_fails_before_the_run(workdir: Path, cli, monkeypatch) -> None:
    monkeypatch.setenv("ARREIO_KB_EMBEDDER", "bogus")
    result = cli("run", "--goal", GOAL, "--offline")
    assert result.exit_code == 5 and "ARREIO_KB_EMBEDDER must be one of" in result.stderr
    assert not list(Path(".arreio/sessions").glob("*.jsonl"))

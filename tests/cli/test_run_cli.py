"""`arreio run` through the real CLI: offline end to end, --json shape, determinism, resume, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

GOAL = "fixtures/goals/quickstart.md"
SUMMARY = Path("build/quickstart-summary.md")


def json_events(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines()]


def test_offline_quickstart_end_to_end(workdir: Path, cli) -> None:
    result = cli("run", "--goal", GOAL, "--offline")
    assert result.exit_code == 0, result.output
    for tool in ("list_dir", "read_file", "write_file"):
        assert tool in result.stdout
    assert "Done. I listed the working directory" in result.stdout
    summary = SUMMARY.read_text()
    assert "## fixtures/quickstart/notes.md" in summary and "Open items: 3" in summary
    report_path = re.search(r"report (\S+report\.json)", result.stdout).group(1)
    report = json.loads(Path(report_path).read_text())
    assert report["verdict"] == "success" and report["tools_used"] == {"list_dir": 1, "read_file": 2, "write_file": 1}
    assert Path(report["events_path"]).exists()


def test_json_output_is_only_events_type_first(workdir: Path, cli) -> None:
    result = cli("run", "--goal", GOAL, "--offline", "--json")
    assert result.exit_code == 0
    events = json_events(result.stdout)
    assert all(next(iter(e)) == "type" for e in events)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "run_start" and kinds[-1] == "done" and kinds.count("done") == 1
    assert kinds.count("tool_start") == kinds.count("tool_end") == 4
    done = events[-1]
    assert done["verdict"] == "success" and done["exit_code"] == 0
    # events.jsonl on disk holds the same stream
    on_disk = json_events((workdir / done["report_path"]).parent.joinpath("events.jsonl").read_text())
    assert on_disk == events


def _normalised(events: list[dict]) -> list[dict]:
    volatile = {"run_id", "session_id", "report_path", "cwd"}
    return [{k: v for k, v in e.items() if k not in volatile} for e in events]


def test_same_command_twice_gives_same_files_and_events(workdir: Path, cli, tmp_path: Path, monkeypatch) -> None:
    first = json_events(cli("run", "--goal", GOAL, "--offline", "--json").stdout)
    first_summary = SUMMARY.read_text()
    # from the same starting state (a second copy of the folder): identical events, identical files
    twin = tmp_path / "twin"
    twin.mkdir()
    import shutil

    shutil.copytree(workdir / "fixtures", twin / "fixtures")
    monkeypatch.chdir(twin)
    second = json_events(cli("run", "--goal", GOAL, "--offline", "--json").stdout)
    assert _normalised(first) == _normalised(second)
    assert SUMMARY.read_text() == first_summary
    # again in the same folder (now holding build/ and .arreio/): the summary existed before this run and
    # holds what it would write, so the offline model reads the same files, writes nothing and is done
    third = json_events(cli("run", "--goal", GOAL, "--offline", "--json").stdout)
    calls = lambda events: [(e["name"], e["arguments"].get("path")) for e in events if e["type"] == "tool_start"]  # noqa: E731
    assert [c for c in calls(third) if c[0] == "read_file"][:2] == [c for c in calls(second) if c[0] == "read_file"]
    assert "write_file" not in [name for name, _ in calls(third)]
    assert "already holds what I would write" in third[-1]["final_text"] and third[-1]["exit_code"] == 0
    assert SUMMARY.read_text() == first_summary
    fourth = json_events(cli("run", "--goal", GOAL, "--offline", "--json").stdout)
    assert _normalised(fourth)[1:] == _normalised(third)[1:]  # and so on, every time


def test_resume_continues_a_partial_run(workdir: Path, cli) -> None:
    script = workdir / "script.yaml"
    script.write_text(
        "- text: step one\n  tool_calls: [{name: write_file, arguments: {path: one.txt, content: '1'}}]\n"
        "- tool_calls: [{name: write_file, arguments: {path: two.txt, content: '2'}}]\n"
        "- text: all finished\n"
    )
    first = cli("run", "--goal", GOAL, "--script", str(script), "--max-steps", "1", "--json")
    assert first.exit_code == 4
    events = json_events(first.stdout)
    assert events[-1]["verdict"] == "partial" and "--resume" in events[-1]["message"]
    session_id = events[0]["session_id"]
    assert Path("one.txt").exists() and not Path("two.txt").exists()

    second = cli("run", "--resume", session_id[:12], "--script", str(script), "--json")
    assert second.exit_code == 0, second.output
    events = json_events(second.stdout)
    assert events[0]["resumed"] is True and events[0]["session_id"] == session_id
    assert events[-1]["final_text"] == "all finished" and Path("two.txt").read_text() == "2"

    again = cli("run", "--resume", session_id, "--offline")
    assert again.exit_code == 2 and "already ended" in again.stderr


def test_retry_fault_from_a_script(workdir: Path, cli) -> None:
    script = workdir / "faults.yaml"
    script.write_text("- error: {status: 503, message: unavailable, retry_after: 0}\n- text: recovered\n")
    result = cli("run", "--goal", GOAL, "--script", str(script), "--json")
    kinds = [e["type"] for e in json_events(result.stdout)]
    assert result.exit_code == 0 and kinds.count("retry") == 1


def test_version(cli) -> None:
    result = cli("--version")
    assert result.exit_code == 0 and re.match(r"arreio \d+\.\d+", result.stdout)


def _error(result, code: int, needle: str) -> None:
    assert result.exit_code == code, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert any(needle in ln for ln in lines), result.stderr
    assert "Traceback" not in result.output


def test_bad_input_is_one_line_and_the_right_code(workdir: Path, cli) -> None:
    _error(cli("run", "--goal", "missing.md", "--offline"), 2, "goal file not found: missing.md")
    _error(cli("run", "--offline"), 2, "nothing to run")
    _error(cli("run", "--goal", GOAL, "--offline", "--model", "openai/gpt-5"), 2, "disagree")
    _error(cli("run", "--goal", GOAL, "--max-steps", "zero"), 2, "--max-steps")
    _error(cli("run", "--resume", "nope", "--offline"), 2, "no session")
    Path("empty.md").write_text("  \n")
    _error(cli("run", "--goal", "empty.md", "--offline"), 2, "goal is empty")
    Path("bad.yaml").write_text("- text: [unclosed\n")
    _error(cli("run", "--goal", GOAL, "--script", "bad.yaml"), 2, "invalid script bad.yaml")
    Path("bad2.yaml").write_text("- txt: typo\n")
    _error(cli("run", "--goal", GOAL, "--script", "bad2.yaml"), 2, "reply 1, 'txt'")


def test_bad_config_is_exit_5(workdir: Path, cli) -> None:
    config = workdir / ".arreio" / "config.yaml"
    config.parent.mkdir()
    config.write_text("model: offline\nmax_steps: [1\n")
    _error(cli("run", "--goal", GOAL), 5, "invalid config .arreio/config.yaml")
    config.write_text("max_stepz: 3\n")
    _error(cli("run", "--goal", GOAL), 5, "max_stepz")
    config.write_text("max_steps: -1\n")
    _error(cli("run", "--goal", GOAL), 5, "'max_steps' from .arreio/config.yaml")


def test_unknown_model_is_exit_5(workdir: Path, cli) -> None:
    _error(cli("run", "--goal", GOAL, "--model", "frobnicator-9"), 5, "frobnicator-9")


def test_config_and_env_layers_pick_the_model(workdir: Path, cli, monkeypatch) -> None:
    config = workdir / ".arreio" / "config.yaml"
    config.parent.mkdir()
    config.write_text("model: offline\nmax_steps: 2\n")
    result = cli("run", "--goal", GOAL, "--json")
    assert result.exit_code == 4  # max_steps 2 from the project config stops the 4-step quickstart
    monkeypatch.setenv("ARREIO_MAX_STEPS", "10")
    assert cli("run", "--goal", GOAL, "--json").exit_code == 0  # env beats the file
    assert cli("run", "--goal", GOAL, "--max-steps", "1").exit_code == 4  # the flag beats env


def test_user_config_is_the_lowest_file_layer(workdir: Path, cli, tmp_path: Path) -> None:
    user = tmp_path / "home" / ".config" / "arreio" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("max_steps: 1\n")
    assert cli("run", "--goal", GOAL, "--offline").exit_code == 4
    project = workdir / ".arreio" / "config.yaml"
    project.parent.mkdir(exist_ok=True)
    project.write_text("max_steps: 8\n")
    assert cli("run", "--goal", GOAL, "--offline").exit_code == 0


def test_tools_flags_restrict_what_the_model_is_offered(workdir: Path, cli) -> None:
    Path("s.yaml").write_text("- tool_calls: [{name: shell, arguments: {command: 'echo hi'}}]\n- text: done\n")
    result = cli("run", "--goal", GOAL, "--script", "s.yaml", "--no-tools", "shell", "--json")
    ends = [e for e in json_events(result.stdout) if e["type"] == "tool_end"]
    assert ends[0]["is_error"] and "unknown tool 'shell'" in ends[0]["preview"]
    only = cli("run", "--goal", GOAL, "--offline", "--tools", "list_dir,read_file", "--json")
    kinds = [e.get("name") for e in json_events(only.stdout) if e["type"] == "tool_start"]
    assert kinds == ["list_dir", "read_file", "read_file"] and not SUMMARY.exists()
    _error(cli("run", "--goal", GOAL, "--offline", "--tools", "nope"), 2, "unknown tool(s) nope")  # usage, not config


def test_live_view_nests_sub_agent_events() -> None:
    import io

    from rich.console import Console

    from arreio.cli.render import LiveRenderer
    from arreio.engine.core import events as ev

    out = io.StringIO()
    render = LiveRenderer(Console(file=out, width=100, highlight=False, color_system=None))
    render(ev.ToolStart(call_id="c1", name="delegate", arguments={"task": "count files"}))
    render(ev.ToolStart(call_id="k1", name="list_dir", arguments={}, agent="d1"))
    render(ev.ToolEnd(call_id="k1", name="list_dir", preview="./ (3 entries)", agent="d1"))
    render(ev.UnitEnd(unit_id="main", verdict="success", agent="d1"))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("● delegate(") and lines[1].startswith("  ↳ d1 ● list_dir(")
    assert lines[2].strip() == "⎿ ./ (3 entries)" and lines[3].strip() == "↳ d1 success"

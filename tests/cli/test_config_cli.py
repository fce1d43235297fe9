"""`arreio config list|get|set|unset|path|edit`: changes keep the user's comments and order, are checked
the way a run checks the config, and an invalid one never reaches the file."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

COMMENTED = """\
# project settings for this repo
model: offline   # the default model
# steps per unit
max_steps: 40

governance:
  # calls per run
  max_tool_calls: 100  # plenty
  # how long silence may last
  stall_s: 300
tools_disabled:
  - web_fetch  # no web here
# end of file
"""


def project_file() -> Path:
    return Path.cwd() / ".arreio" / "config.yaml"


def user_file() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "arreio" / "config.yaml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_set_keeps_comments_and_key_order(cli) -> None:
    path = write(project_file(), COMMENTED)
    assert cli("config", "set", "max_steps", "80").exit_code == 0
    assert cli("config", "set", "governance.max_tool_calls", "250").exit_code == 0
    assert cli("config", "set", "tools_disabled", "[shell, web_fetch]").exit_code == 0
    done = cli("config", "set", "sandbox.mode", "read-only")  # a new section goes at the end
    assert done.exit_code == 0 and "sandbox.mode = read-only" in done.stdout
    assert (
        path.read_text()
        == COMMENTED.replace("max_steps: 40", "max_steps: 80")
        .replace("max_tool_calls: 100", "max_tool_calls: 250")
        .replace("  - web_fetch  # no web here\n", "  - shell\n  - web_fetch\n")
        + "sandbox:\n  mode: read-only\n"
    )


def test_value_is_read_as_yaml_and_get_prints_the_effective_value(cli) -> None:
    assert cli("config", "get", "retry.max_attempts").stdout.strip() == "6"  # defaults, before any file
    assert cli("config", "get", "governance.max_tool_calls").stdout.strip() == "200"  # a feature's own default
    assert cli("config", "get", "sandbox.mode").stdout.strip() == "workspace-write"
    cli("config", "set", "max_steps", "80")
    cli("config", "set", "tools_disabled", "[shell]")
    cli("config", "set", "web.allow_private", "true")
    assert json.loads(cli("config", "get", "max_steps", "--json").stdout) == 80
    assert json.loads(cli("config", "get", "tools_disabled", "--json").stdout) == ["shell"]
    assert cli("config", "get", "web.allow_private").stdout.strip() == "true"
    assert project_file().read_text() == "max_steps: 80\ntools_disabled:\n  - shell\nweb:\n  allow_private: true\n"


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("max_step", "80", "unknown setting 'max_step' in .arreio/config.yaml (did you mean 'max_steps'?)"),
        (
            "governance.max_tool_call",
            "5",
            "unknown setting 'governance.max_tool_call' (did you mean 'governance.max_tool_calls'?)",
        ),
        ("max_steps", "0", "invalid setting 'max_steps' from .arreio/config.yaml"),
        ("sandbox.mode", "bogus", "invalid setting 'sandbox.mode'"),
        ("retry.max_attempts", "many", "invalid setting 'retry.max_attempts'"),
        ("model", "nosuch/model", "unknown provider 'nosuch'"),
    ],
)
def test_invalid_change_is_refused_and_nothing_is_written(cli, key: str, value: str, needle: str) -> None:
    path = write(project_file(), COMMENTED)
    before = path.read_bytes()
    result = cli("config", "set", key, value)
    assert result.exit_code == 5, result.output
    assert needle in result.stderr and "nothing written" in result.stderr
    assert path.read_bytes() == before


def test_refused_change_creates_no_file(cli) -> None:
    assert cli("config", "set", "max_steps", "--", "-3").exit_code == 5  # a negative VALUE after --
    assert not project_file().exists()


def test_usage_mistakes_exit_2(cli) -> None:
    assert cli("config", "set", "max_steps").exit_code == 2  # no VALUE
    bad_yaml = cli("config", "set", "tools_disabled", "[shell")
    assert bad_yaml.exit_code == 2 and "VALUE is not valid YAML" in bad_yaml.stderr
    assert cli("config", "get", "retry..max_attempts").exit_code == 2
    write(project_file(), "model: offline\n")
    assert cli("config", "set", "model.name", "x").exit_code == 2  # model is a value, not a section
    assert project_file().read_text() == "model: offline\n"


def test_a_negative_number_says_how_to_give_it(cli) -> None:
    """Regression: `config set max_steps -5` said only "No such option: -5"."""
    result = cli("config", "set", "governance.max_tool_calls", "-5")
    assert result.exit_code == 2
    assert "put `--` before the arguments, as in `arreio config set -- KEY -5`" in result.stderr
    given = cli("config", "set", "--", "governance.max_tool_calls", "-5")  # reaches the check of the value
    assert given.exit_code == 5 and "governance.max_tool_calls" in given.stderr and not project_file().exists()


def test_an_empty_value_says_to_unset_instead(cli) -> None:
    """Regression: `config set model ""` said "Input should be a valid string" (YAML read it as null)."""
    result = cli("config", "set", "model", "")
    assert (
        result.exit_code == 2
        and "an empty value sets nothing; to remove model, use `arreio config unset model`" in result.stderr
    )
    assert not project_file().exists()


def test_get_unknown_key_says_did_you_mean(cli) -> None:
    result = cli("config", "get", "retry.max_attempt")
    assert result.exit_code == 2  # a name typed wrong: usage, not a broken config
    assert "unknown setting 'retry.max_attempt' (did you mean 'retry.max_attempts'?)" in result.stderr


def test_global_writes_the_user_file(cli) -> None:
    assert cli("config", "set", "--global", "governance.max_tool_calls", "20").exit_code == 0
    assert user_file().read_text() == "governance:\n  max_tool_calls: 20\n"
    assert not project_file().exists()
    cli("config", "set", "governance.max_tool_calls", "30")  # the project beats the user
    assert cli("config", "get", "governance.max_tool_calls").stdout.strip() == "30"


def test_list_says_where_each_value_comes_from(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    write(user_file(), "max_steps: 10\nretry: {max_attempts: 2}\n")
    write(project_file(), "max_steps: 20\n")
    monkeypatch.setenv("ARREIO_MODEL", "offline")
    rows = {r["key"]: r for r in json.loads(cli("config", "list", "--json").stdout)["settings"]}
    assert rows["max_steps"] == {"key": "max_steps", "value": 20, "source": "project file"}
    assert rows["retry.max_attempts"]["source"] == "user file"
    assert rows["retry.base_delay_s"]["source"] == "default"
    assert rows["model"]["source"] == "environment (ARREIO_MODEL)"
    assert rows["governance.max_tool_calls"] == {"key": "governance.max_tool_calls", "value": 200, "source": "default"}
    text = cli("config", "list").stdout
    line = next(ln for ln in text.splitlines() if ln.startswith("max_steps "))
    assert line.split() == ["max_steps", "20", "project", "file"]


def test_list_of_an_invalid_config_names_the_problem(cli) -> None:
    write(project_file(), "max_step: 3\n")
    result = cli("config", "list")
    assert result.exit_code == 5 and "did you mean 'max_steps'?" in result.stderr


def test_unset_keeps_comments_and_removes_an_emptied_section(cli) -> None:
    path = write(project_file(), COMMENTED)
    assert cli("config", "unset", "governance.stall_s").exit_code == 0
    assert path.read_text() == COMMENTED.replace("  stall_s: 300\n", "")
    assert cli("config", "unset", "governance.max_tool_calls").exit_code == 0  # its section goes with it
    assert cli("config", "unset", "tools_disabled").exit_code == 0
    assert path.read_text() == (
        "# project settings for this repo\nmodel: offline   # the default model\n# steps per unit\nmax_steps: 40\n\n"
        "  # calls per run\n  # how long silence may last\n# end of file\n"
    )
    missing = cli("config", "unset", "fsync")
    assert missing.exit_code == 1 and "fsync is not set in .arreio/config.yaml" in missing.stderr


def test_unset_repairs_a_broken_file_and_points_at_the_other_file(cli) -> None:
    path = write(project_file(), "max_step: 3  # typo\nmax_steps: 9\n")
    assert cli("config", "set", "max_tokens", "100").exit_code == 5  # the config is invalid already
    assert cli("config", "unset", "max_step").exit_code == 0
    assert path.read_text() == "max_steps: 9\n"
    write(user_file(), "max_tokens: 4000\n")
    elsewhere = cli("config", "unset", "max_tokens")
    assert elsewhere.exit_code == 1 and "(use --global)" in elsewhere.stderr


def test_path_lists_the_files_in_force(cli) -> None:
    write(user_file(), "max_steps: 3\n")
    rows = json.loads(cli("config", "path", "--json").stdout)
    assert [(r["kind"], r["exists"]) for r in rows] == [("user", True), ("project", False)]
    assert rows[1]["path"] == str(project_file().resolve())
    text = cli("config", "path").stdout
    assert "(exists)" in text and "(not present)" in text


EDITOR = """\
import pathlib, sys
path = pathlib.Path(sys.argv[1])
text = path.read_text() if path.exists() else ""
path.write_text(text + {line!r})
"""


def _editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, var: str = "EDITOR") -> None:
    script = tmp_path / "edit.py"
    script.write_text(EDITOR.format(line=line))
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv(var, f"{sys.executable} {script}")


def test_edit_runs_the_editor_then_checks(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _editor(tmp_path, monkeypatch, "max_steps: 12\n")
    result = cli("config", "edit")
    assert result.exit_code == 0 and "config ok" in result.stdout
    assert project_file().read_text() == "max_steps: 12\n"
    _editor(tmp_path, monkeypatch, "fsync: false\n", var="VISUAL")  # VISUAL first
    monkeypatch.setenv("EDITOR", "false")
    assert cli("config", "edit", "--global").exit_code == 0
    assert user_file().read_text() == "fsync: false\n"


def test_edit_keeps_an_invalid_result_and_exits_5(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(project_file(), "# mine\nmax_steps: 12\n")
    _editor(tmp_path, monkeypatch, "governance: {max_tool_call: 5}\n")
    result = cli("config", "edit")
    assert result.exit_code == 5
    assert "did you mean 'governance.max_tool_calls'?" in result.stderr and "kept as you wrote it" in result.stderr
    assert project_file().read_text() == "# mine\nmax_steps: 12\ngovernance: {max_tool_call: 5}\n"


def test_edit_without_an_editor_says_so(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "/nonexistent/editor --wait")
    result = cli("config", "edit")
    assert result.exit_code == 2 and "cannot start the editor '/nonexistent/editor'" in result.stderr


def test_crlf_files_and_flow_mappings_keep_their_style(cli) -> None:
    path = project_file()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"# mine\r\nmax_steps: 3\r\nretry: {max_attempts: 2}\r\n")
    assert cli("config", "set", "retry.base_delay_s", "0.5").exit_code == 0
    assert cli("config", "unset", "max_steps").exit_code == 0
    assert path.read_bytes() == b"# mine\r\nretry: {max_attempts: 2, base_delay_s: 0.5}\r\n"
    assert cli("config", "unset", "retry.max_attempts").exit_code == 0
    assert path.read_bytes() == b"# mine\r\nretry: {base_delay_s: 0.5}\r\n"

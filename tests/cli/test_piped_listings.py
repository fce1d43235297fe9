"""Listings on a pipe are whole lines (docs/running.md, "What it prints, where": nothing cut at 80 columns), so
`| grep` and `| cut` read what a person reads: `arreio sessions show ID | grep approve` finds the
command unbroken, `arreio skills list | cat` keeps each description on its line. And what the agent,
the model or a tool wrote is shown escaped there, never acted on by the terminal. Each command is a
real subprocess whose stdout is a pipe, with no COLUMNS to lean on."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

LONG_TITLE = "Summarise every note in the notes folder and then write a report that is long enough to be cut"
LONG_COMMAND = "echo " + "a-rather-long-argument-" * 4 + "past-eighty-columns"
LONG_DESCRIPTION = (
    "Tidy the notes folder: merge duplicate headings, sort the open items by date, "
    "and keep every description on one line"
)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def env(arreio_env: dict) -> dict:
    return {k: v for k, v in arreio_env.items() if k not in ("COLUMNS", "LINES")}


def arreio(work: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return run_cli(work, env, *args, timeout=60)


def line_with(output: str, text: str) -> str:
    found = [line for line in output.splitlines() if text in line]
    assert found, f"no line holds {text!r}:\n{output}"
    return found[0]


def test_sessions_show_keeps_the_approve_command_on_one_line(work: Path, env: dict) -> None:
    (work / "p.yaml").write_text(
        f'- tool_calls: [{{name: shell, arguments: {{command: "{LONG_COMMAND}"}}}}]\n- text: "ok"\n'
    )
    paused = arreio(work, env, "run", LONG_TITLE, "--script", "p.yaml")
    assert paused.returncode == 3, paused.stderr  # no terminal to ask: the run pauses for approval
    (session,) = (work / ".arreio" / "sessions").glob("*.jsonl")
    shown = arreio(work, env, "sessions", "show", session.stem)
    assert shown.returncode == 0, shown.stderr
    sid = session.stem
    assert (
        line_with(shown.stdout, "approve with").strip()
        == f"approve with `arreio approve {sid}` or refuse with `arreio approve {sid} --deny`"
    )
    assert line_with(shown.stdout, "waiting for approval").endswith(f"$ {LONG_COMMAND}")
    assert line_with(shown.stdout, "Summarise every note") == LONG_TITLE  # the title, whole


def test_skills_list_keeps_each_description_on_one_line(work: Path, env: dict) -> None:
    skill = work / ".arreio" / "skills" / "tidy-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f'---\nname: tidy-notes\ndescription: "{LONG_DESCRIPTION}"\ncreated_by: agent\n---\n\nMerge, then sort.\n'
    )
    listed = arreio(work, env, "skills", "list")
    assert listed.returncode == 0, listed.stderr
    row = line_with(listed.stdout, "tidy-notes")
    assert row.split()[:3] == ["tidy-notes", "active", "agent"] and row.rstrip().endswith(LONG_DESCRIPTION)
    assert "description" in listed.stdout.splitlines()[0]  # the header is whole too, not "descriptio"


def test_skills_list_and_show_keep_escapes_from_the_terminal(work: Path, env: dict) -> None:
    """The agent writes skills: a title-setting sequence in a description (or the body) is shown."""
    skill = work / ".arreio" / "skills" / "tidy-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        '---\nname: tidy-notes\ndescription: "Tidy notes\\e]0;PWNED\\a [bold]now[/bold]"\n'
        "created_by: agent\n---\n\nBody\x1b[2J here.\n"
    )
    listed = arreio(work, env, "skills", "list")
    assert listed.returncode == 0, listed.stderr
    assert "\x1b" not in listed.stdout and "\x07" not in listed.stdout
    assert line_with(listed.stdout, "tidy-notes").rstrip().endswith("Tidy notes\\x1b]0;PWNED\\x07 [bold]now[/bold]")
    shown = arreio(work, env, "skills", "show", "tidy-notes")
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout and "Body\\x1b[2J here." in shown.stdout


def test_mcp_list_keeps_a_long_target_on_one_line(work: Path, env: dict) -> None:
    script = "/opt/servers/a-rather-long-folder-name/another-long-folder/the-notes-mcp-server.py"
    (work / ".arreio").mkdir()
    (work / ".arreio" / "config.yaml").write_text(
        f"mcp_servers:\n  notes:\n    command: /usr/bin/python3\n    args: [{script}, --root, /srv/notes/archive]\n"
    )
    listed = arreio(work, env, "mcp", "list", "--no-connect")
    assert listed.returncode == 0, listed.stderr
    assert f"/usr/bin/python3 {script} --root /srv/notes/archive" in line_with(listed.stdout, "notes")


def test_cassette_show_keeps_a_long_path_on_one_line(work: Path, env: dict) -> None:
    folder = work / "a-rather-long-folder-name-for-cassettes" / "recorded-on-a-tuesday"
    folder.mkdir(parents=True)
    shutil.copy(REPO / "fixtures" / "cassettes" / "offline-quickstart.v1.cassette.jsonl", folder)
    path = str((folder / "offline-quickstart.v1.cassette.jsonl").relative_to(work))
    shown = arreio(work, env, "cassette", "show", path)
    assert shown.returncode == 0, shown.stderr
    assert line_with(shown.stdout, "cassette ").startswith(f"cassette {path} · format v1 · offline · recorded ")


def test_models_keeps_its_closing_note_on_one_line(work: Path, env: dict) -> None:
    listed = arreio(work, env, "models")
    assert listed.returncode == 0, listed.stderr
    note = line_with(listed.stdout, "Prices in US dollars")
    assert "any litellm/<vendor>/<model> works as well." in note and note.endswith("costs $0 (local).")


def test_sessions_show_requests_keeps_escapes_from_the_terminal(work: Path, env: dict) -> None:
    """Each request's messages are model text and tool output: shown escaped, as in the live view."""
    (work / "evil.txt").write_text("file says \x1b]0;PWNED\x07 hi\n")
    (work / "s.yaml").write_text(
        '- text: "reading\\e[2J it"\n  tool_calls: [{name: read_file, arguments: {path: evil.txt}}]\n- text: "done"\n'
    )
    assert arreio(work, env, "run", "Read evil.txt", "--script", "s.yaml").returncode == 0
    (session,) = (work / ".arreio" / "sessions").glob("*.jsonl")
    shown = arreio(work, env, "sessions", "show", session.stem, "--requests")
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout
    assert "reading\\x1b[2J it" in shown.stdout and "\\x1b]0;PWNED\\x07 hi" in shown.stdout


def test_mcp_list_on_a_pipe_is_a_line_per_server_not_a_box_table(work: Path, env: dict) -> None:
    import sys

    (work / ".arreio").mkdir()
    (work / ".arreio" / "config.yaml").write_text(
        f"mcp_servers:\n  fx: {{command: {sys.executable}, args: [{REPO / 'fixtures' / 'mcp' / 'wire_server.py'}]}}\n"
        "  gone: {command: /nonexistent/bin/server}\n"
    )
    listed = arreio(work, env, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert len(lines) == 2 and not any(ch in listed.stdout for ch in "┃│┏━")
    assert lines[0].startswith("fx: ready (stdio: ") and "tools: fx__echo, fx__add" in lines[0]
    assert lines[1] == "gone: failed (stdio: /nonexistent/bin/server) — command not found: /nonexistent/bin/server"


def test_sessions_show_puts_each_result_under_its_call(work: Path, env: dict) -> None:
    for name in ("a", "b", "c"):
        (work / f"{name}.md").write_text(f"# {name} notes\n")
    calls = ", ".join(f"{{name: read_file, arguments: {{path: {n}.md}}}}" for n in ("a", "b", "c"))
    (work / "s.yaml").write_text(f"- tool_calls: [{calls}]\n- text: done\n")
    assert arreio(work, env, "run", "read the notes", "--script", "s.yaml").returncode == 0
    (session,) = (work / ".arreio" / "sessions").glob("*.jsonl")
    shown = arreio(work, env, "sessions", "show", session.stem).stdout.splitlines()
    at = [i for i, line in enumerate(shown) if line.startswith("● read_file")]
    assert len(at) == 3
    for i, name in zip(at, ("a", "b", "c")):
        assert f'"{name}.md"' in shown[i] and shown[i + 1].startswith("  ⎿ ") and f"# {name} notes" in shown[i + 1]

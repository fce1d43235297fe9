"""Help reads like a manual: no Python types (`<bool>`, `<str>`, `<list[str]>`), no
`{session_id}` placeholders, no `x>=1` ranges — in every command's help — and choices are listed."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from arreio.cli.app import app

INTERNALS = re.compile(r"<(?:bool|str|int|float|path|list\[[^\]]*\]|[a-z ]+ range)>|\{[a-z_]+\}|\bx[<>]=")


def command_paths() -> list[list[str]]:
    root = typer.main.get_command(app)
    paths: list[list[str]] = [[]]

    def walk(group, prefix: list[str]) -> None:
        for name, command in getattr(group, "commands", {}).items():
            paths.append([*prefix, name])
            walk(command, [*prefix, name])

    walk(root, [])
    return paths


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "arreio")
def test_no_help_shows_python_internals(path: list[str]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert INTERNALS.findall(result.output) == [], result.output


def test_choices_are_listed() -> None:
    run_help = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"}, terminal_width=200).output
    assert "live|text|json" in run_help and "strict|lenient" in run_help and "--goal" in run_help
    kb_help = CliRunner().invoke(app, ["kb", "search", "--help"], env={"COLUMNS": "200"}, terminal_width=200).output
    assert "hybrid|keyword|vector" in kb_help and "1 to 100" in kb_help

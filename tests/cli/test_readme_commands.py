"""Every `arreio …` command README.md shows exists: each command line in the README's shell
blocks names a real command path, whose help works."""

from __future__ import annotations

import re
import shlex

import pytest
import typer
from typer.testing import CliRunner

from arreio.cli.app import app
from tests.conftest import REPO

BLOCK = re.compile(r"```(sh|console)\n(.*?)```", re.DOTALL)


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = []
    for kind, block in BLOCK.findall(text):
        for line in block.splitlines():
            if kind == "console" and not line.startswith("$ "):
                continue  # a console block is a transcript: only `$ ` lines are typed, the rest is output
            line = line.split("  #")[0].strip().removeprefix("$ ")
            previous: str | None = None
            for part in (p.strip() for p in re.split(r"\|\s*|&&\s*", line)):  # pipes, `pip … && arreio …`
                if part.startswith("arreio "):
                    lines.append(part)
                    previous = part
                elif previous and part and part.split()[0].isalpha() and part.split()[0] not in ("head", "cat", "tee"):
                    # `arreio sessions list | show ID | doctor ID`: siblings of the command before
                    parent = " ".join(previous.split()[:-1]) if len(previous.split()) > 2 else previous
                    lines.append(f"{parent} {part}")
    return lines


def command_path(line: str) -> list[str]:
    """The sub-command words of a README line (`arreio memory decision list` → memory decision list);
    alternatives written `a | b` were split off already. A word where a group expects a sub-command
    that is not one of its commands fails the test."""
    words = shlex.split(line.replace("…", "x"))[1:]
    root = typer.main.get_command(app)
    path, node = [], root
    for word in words:
        commands = getattr(node, "commands", None)
        if not commands:
            break
        if word not in commands:
            assert word.startswith(("-", "[")), f"README: {word!r} is not a command of `arreio {' '.join(path)}`: {line}"
            break
        path.append(word)
        node = commands[word]
    return path


@pytest.mark.parametrize("line", readme_commands())
def test_a_readme_command_exists(line: str) -> None:
    path = command_path(line)
    words = shlex.split(line.replace("…", "x"))[1:]
    if words and not words[0].startswith("-"):
        assert path, f"README names an arreio command that does not exist: {line}"
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, (line, result.output)


def test_the_readme_shows_the_commands() -> None:
    assert len(readme_commands()) > 40

"""The README and the docs show only commands that exist: each `arreio …` line in their shell blocks
names a real command path, whose help works. And the README stays a page a newcomer reads in a
minute: short, its two commands as CI runs them, the first real-model run and undo on it, and every
link it gives pointing at a file in the repository."""

from __future__ import annotations

import functools
import re
import shlex

import pytest
import typer
from typer.testing import CliRunner

from arreio.cli.app import app
from tests.conftest import REPO

BLOCK = re.compile(r"```(sh|console|bash)\n(.*?)```", re.DOTALL)
# The user-facing pages; docs/reference/ is generated from the commands themselves.
PAGERS = ("head", "cat", "tee")  # what a pipe hands output to, not an arreio command
PAGES = [REPO / "README.md", *sorted(p for p in (REPO / "docs").glob("*.md"))]


def shown_commands(pages: list = PAGES) -> list[str]:
    lines = []
    for page in pages:
        for kind, block in BLOCK.findall(page.read_text(encoding="utf-8")):
            for line in block.replace("\\\n", " ").splitlines():  # a line continued with `\`
                if kind == "console" and not line.startswith("$ "):
                    continue  # a console block is a transcript: only `$ ` lines are typed, the rest is output
                line = line.split("  #")[0].strip().removeprefix("$ ")
                previous: str | None = None
                for part in (p.strip() for p in re.split(r"\|\s*|&&\s*", line)):  # pipes, `pip … && arreio …`
                    if part.startswith("arreio "):
                        lines.append(part)
                        previous = part
                    elif previous and part and part.split()[0].isalpha() and part.split()[0] not in PAGERS:
                        # `arreio sessions list | show ID | doctor ID`: siblings of the command before
                        parent = " ".join(previous.split()[:-1]) if len(previous.split()) > 2 else previous
                        lines.append(f"{parent} {part}")
    return lines


@functools.cache
def _command_tree():
    return typer.main.get_command(app)


@functools.cache
def _help_of(path: tuple[str, ...]) -> tuple[int, str]:
    """`arreio PATH --help`'s exit code and output, once per path (many lines share a command)."""
    result = CliRunner().invoke(app, [*path, "--help"])
    return result.exit_code, result.output


def command_path(line: str) -> list[str]:
    """The sub-command words of a line (`arreio memory decision list` → memory decision list);
    alternatives written `a | b` were split off already. A word where a group expects a sub-command
    that is not one of its commands fails the test."""
    words = shlex.split(line.replace("…", "x"))[1:]
    path, node = [], _command_tree()
    for word in words:
        commands = getattr(node, "commands", None)
        if not commands:
            break
        if word not in commands:
            assert word.startswith(("-", "[")), f"docs: {word!r} is not a command of `arreio {' '.join(path)}`: {line}"
            break
        path.append(word)
        node = commands[word]
    return path


@pytest.mark.parametrize("line", sorted(set(shown_commands())))
def test_a_shown_command_exists(line: str) -> None:
    path = command_path(line)
    words = shlex.split(line.replace("…", "x"))[1:]
    if words and not words[0].startswith("-"):
        assert path, f"the docs name an arreio command that does not exist: {line}"
    exit_code, output = _help_of(tuple(path))
    assert exit_code == 0, (line, output)


def test_the_docs_show_the_commands() -> None:
    assert len(shown_commands()) > 40
    assert len(shown_commands([REPO / "README.md"])) >= 10


README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= 200


@pytest.mark.parametrize(
    "command",
    [
        "pip install -e '.[dev]' && arreio run --goal fixtures/goals/quickstart.md --offline",  # set-up + offline run
        "pip install -e '.[dev]' && pytest -n auto --dist worksteal",  # set-up + tests: .ci/run runs this line
        "arreio run --goal fixtures/goals/quickstart.md --model anthropic/claude-sonnet-4-5",  # a first real model
        "arreio undo",
    ],
)
def test_the_readme_shows_the_first_steps(command: str) -> None:
    assert command in README


def test_ci_runs_the_readmes_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[dev]' && pytest -n auto --dist worksteal" in ci


@pytest.mark.parametrize("target", sorted(set(re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README))))
def test_a_readme_link_is_in_the_repository(target: str) -> None:
    if target.startswith(("http://", "https://")):
        return
    assert (REPO / target).is_file(), f"README links to {target}, which is not in the repository"

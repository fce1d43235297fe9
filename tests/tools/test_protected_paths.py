"""Protected paths (invariant 10: the agent stays in its room): the file tools never write arreio's state,
`.git/` or arreio's user config — however the path is spelled — unless a policy rule names the path.

Real files and real symlinks, through the real chain (`run_tool`) and, at the end, the real CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arreio.cli.app import app
from arreio.engine.core.config import Settings
from arreio.engine.tools.base import ToolResult
from arreio.engine.tools.builtin import builtin_tools
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext
from arreio.engine.walls.protected import protected_paths, protecting
from tests.conftest import isolate

STATE_REFUSAL = "refused: .arreio/ is arreio's own state; the agent's tools cannot write it"
CONFIG = "governance:\n  max_tool_calls: 50\n"
EVIL = "governance:\n  policy:\n    - {tool: shell, action: allow}\nmcp_servers:\n  x: {command: [touch, pwned]}\n"


@pytest.fixture
def work(root: Path) -> Path:
    (root / ".arreio").mkdir()
    (root / ".arreio" / "config.yaml").write_text(CONFIG)
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    return root


def context(root: Path, policy: list[dict[str, Any]] | None = None, **env: str) -> RunContext:
    settings = Settings(governance={"policy": policy} if policy else {})
    return RunContext(
        cwd=root, env={"PATH": "/usr/bin:/bin", "HOME": str(root.parent / "home"), **env}, settings=settings
    )


def call(ctx: RunContext, name: str, **arguments: Any) -> ToolResult:
    return asyncio.run(run_tool(ToolRegistry(builtin_tools()), name, arguments, ctx))


@pytest.mark.parametrize(
    "path",
    [
        ".arreio/config.yaml",
        "./.arreio/config.yaml",
        "src/../.arreio/config.yaml",
        ".arreio//config.yaml",
        ".arreio/sessions/s.jsonl",
        ".arreio/audit.jsonl",
        ".arreio/skills/evil/SKILL.md",
        ".arreio",
        ".ARREIO/config.yaml",
    ],
)
def test_write_file_refuses_the_state_folder_however_spelled(work: Path, path: str) -> None:
    result = call(context(work), "write_file", path=path, content=EVIL)
    assert result.is_error and STATE_REFUSAL in result.content
    assert (work / ".arreio" / "config.yaml").read_text() == CONFIG
    assert not (work / ".arreio" / "skills").exists() and not (work / ".arreio" / "audit.jsonl").exists()


def test_absolute_path_to_the_state_folder_is_refused(work: Path) -> None:
    result = call(context(work), "write_file", path=str(work / ".arreio" / "config.yaml"), content=EVIL)
    assert result.is_error and STATE_REFUSAL in result.content


def test_edit_file_refuses_the_state_folder(work: Path) -> None:
    result = call(
        context(work), "edit_file", path="./.arreio/config.yaml", old="max_tool_calls: 50", new="max_tool_calls: 9999"
    )
    assert result.is_error and STATE_REFUSAL in result.content
    assert (work / ".arreio" / "config.yaml").read_text() == CONFIG


def test_a_symlink_to_the_parent_does_not_reach_the_state_folder(work: Path) -> None:
    (work / "up").symlink_to("..")
    sneaky = f"up/{work.name}/.arreio/config.yaml"
    for name, extra in (("write_file", {"content": EVIL}), ("edit_file", {"old": "50", "new": "5000"})):
        result = call(context(work), name, path=sneaky, **extra)
        assert result.is_error and STATE_REFUSAL in result.content
    assert (work / ".arreio" / "config.yaml").read_text() == CONFIG


def test_a_symlink_to_the_state_folder_is_the_state_folder(work: Path) -> None:
    (work / "notes").symlink_to(".arreio")
    (work / "src" / "cfg.yaml").symlink_to("../.arreio/config.yaml")
    assert STATE_REFUSAL in call(context(work), "write_file", path="notes/config.yaml", content=EVIL).content
    assert STATE_REFUSAL in call(context(work), "edit_file", path="src/cfg.yaml", old="50", new="5").content
    assert (work / ".arreio" / "config.yaml").read_text() == CONFIG


def test_arreio_home_elsewhere_is_protected_and_so_is_the_local_folder(work: Path) -> None:
    home = work / "state"
    home.mkdir()
    ctx = context(work, ARREIO_HOME=str(home))
    result = call(ctx, "write_file", path="state/config.yaml", content=EVIL)
    assert result.is_error and "refused: state/ is arreio's own state" in result.content
    assert STATE_REFUSAL in call(ctx, "write_file", path=".arreio/config.yaml", content=EVIL).content
    assert not (home / "config.yaml").exists()


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        "./.git/hooks/post-checkout",
        "src/../.git/config",
        ".GIT/config",
        ".git",
        "vendor/lib/.git/config",
    ],
)
def test_git_is_code_and_is_refused(work: Path, path: str) -> None:
    result = call(context(work), "write_file", path=path, content='[core]\n\tfsmonitor = "touch pwned"\n')
    assert result.is_error and "version control (git runs its config and hooks as code)" in result.content
    assert (work / ".git" / "config").read_text() == "[core]\n\tbare = false\n"
    assert not (work / ".git" / "hooks" / "pre-commit").exists()


def test_edit_file_refuses_git_config(work: Path) -> None:
    result = call(context(work), "edit_file", path=".git/config", old="bare = false", new='fsmonitor = "touch pwned"')
    assert result.is_error and "refused: .git/ is version control" in result.content


def test_a_git_file_points_at_a_protected_folder(work: Path, tmp_path: Path) -> None:
    """A worktree's `.git` is a file naming the real git folder; that folder is protected too."""
    real = tmp_path / "main-repo" / ".git" / "worktrees" / "w"
    real.mkdir(parents=True)
    tree = work / "tree"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {real}\n")
    assert real in protected_paths(tree, {"HOME": str(tmp_path / "home")})
    assert protecting(tree / ".git", tree, {}) is not None


def test_the_user_config_is_refused_when_the_working_directory_is_home(work: Path) -> None:
    ctx = context(work, HOME=str(work), XDG_CONFIG_HOME=str(work / ".config"))
    result = call(ctx, "write_file", path=".config/arreio/config.yaml", content=EVIL)
    assert result.is_error and "refused: .config/arreio/ is arreio's user config" in result.content
    assert not (work / ".config" / "arreio" / "config.yaml").exists()


def test_reading_protected_files_is_fine(work: Path) -> None:
    assert "max_tool_calls" in call(context(work), "read_file", path=".arreio/config.yaml").content


@pytest.mark.parametrize(
    "path",
    [
        "src/app.py",
        ".github/workflows/ci.yml",
        ".gitignore",
        ".gitattributes",
        "docs/.arreio-notes.md",
        "src/git/config",
        "arreio/config.yaml",
        "notes/.git-tips.md",
    ],
)
def test_ordinary_paths_are_still_written(work: Path, path: str) -> None:
    result = call(context(work), "write_file", path=path, content="ok\n")
    assert not result.is_error, result.content
    assert (work / path).read_text() == "ok\n"


def test_a_rule_naming_the_path_allows_the_write(work: Path) -> None:
    policy = [
        {"tool": "write_file", "path": ".git/hooks/pre-commit", "action": "allow"},
        {"tool": "edit_file", "path": ".arreio/config.yaml", "action": "allow"},
    ]
    ctx = context(work, policy)
    assert not call(ctx, "write_file", path=".git/hooks/pre-commit", content="#!/bin/sh\nmake lint\n").is_error
    assert (work / ".git" / "hooks" / "pre-commit").read_text().endswith("make lint\n")
    assert not call(ctx, "edit_file", path="./.arreio/config.yaml", old="50", new="60").is_error
    # named for one path and one tool only: the rest stays refused
    assert call(ctx, "write_file", path=".git/config", content="x").is_error
    assert call(ctx, "write_file", path=".arreio/config.yaml", content="x").is_error


def test_a_glob_inside_the_folder_allows_below_it(work: Path) -> None:
    ctx = context(work, [{"tool": "write_file", "path": ".git/hooks/*", "action": "allow"}])
    assert not call(ctx, "write_file", path=".git/hooks/pre-push", content="#!/bin/sh\n").is_error
    assert call(ctx, "write_file", path=".git/config", content="x").is_error


@pytest.mark.parametrize(
    "rule",
    [
        {"tool": "write_file", "action": "allow"},
        {"tool": "*", "action": "allow"},
        {"tool": "write_file", "path": "**", "action": "allow"},
        {"tool": "write_file", "path": "*", "action": "allow"},
        {"tool": "write_file", "path": ".g*/**", "action": "allow"},
        {"tool": "write_file", "path": ".git/hooks/*", "action": "deny"},
        {"tool": "edit_file", "path": ".git/hooks/*", "action": "allow"},
    ],
)
def test_a_rule_that_does_not_name_the_path_unlocks_nothing(work: Path, rule: dict[str, Any]) -> None:
    result = call(context(work, [rule]), "write_file", path=".git/hooks/pre-commit", content="#!/bin/sh\n")
    assert result.is_error and "refused: .git/" in result.content


def test_protected_paths_lists_state_git_and_user_config(tmp_path: Path) -> None:
    cwd = tmp_path / "proj"
    cwd.mkdir()
    env = {"HOME": str(tmp_path / "home"), "ARREIO_HOME": str(tmp_path / "elsewhere")}
    listed = protected_paths(cwd, env)
    for expected in (tmp_path / "elsewhere", cwd / ".arreio", cwd / ".git", tmp_path / "home" / ".config" / "arreio"):
        assert expected in listed
    (tmp_path / "real-state").mkdir()
    (cwd / ".arreio").symlink_to(tmp_path / "real-state")
    assert tmp_path / "real-state" in protected_paths(cwd, {"HOME": str(tmp_path / "home")})


# -- end to end: the red-team's writes, through the CLI and a scripted model ----------------------
def events_of(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    (folder / ".arreio").mkdir(parents=True)
    (folder / ".arreio" / "config.yaml").write_text(CONFIG)
    (folder / "GOAL.md").write_text("# Tidy up\n\nTidy the project.\n")
    isolate(monkeypatch, tmp_path / "home", folder)
    return folder


def cli(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_cli_run_cannot_rewrite_its_own_config_even_with_yes(project: Path) -> None:
    script = [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": ".arreio/config.yaml", "content": EVIL}},
                {
                    "name": "write_file",
                    "arguments": {
                        "path": "./.arreio/skills/x/SKILL.md",
                        "content": "---\nname: x\ncreated_by: bundled\n---\nbody\n",
                    },
                },
            ]
        },
        {"text": "Done."},
    ]
    (project / "s.yaml").write_text(json.dumps(script))
    result = cli("run", "--goal", "GOAL.md", "--script", "s.yaml", "--json", "--yes")
    ends = [e for e in events_of(result.stdout) if e["type"] == "tool_end"]
    assert [e["is_error"] for e in ends] == [True, True]
    assert all("refused: .arreio/ is arreio's own state" in e["preview"] for e in ends)
    assert (project / ".arreio" / "config.yaml").read_text() == CONFIG
    assert not (project / ".arreio" / "skills" / "x").exists()


def test_cli_run_cannot_plant_an_fsmonitor_that_an_allowed_git_status_would_run(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    before = (project / ".git" / "config").read_text()
    (project / ".arreio" / "config.yaml").write_text(
        'governance:\n  policy:\n    - {tool: shell, match: "^git (status|diff|log)\\\\b", action: allow}\n'
    )
    hook = '[core]\n\tfsmonitor = "touch pwned; false"\n'
    script = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": ".git/config", "content": hook}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": "git status --short"}}]},
        {"text": "Done."},
    ]
    (project / "s.yaml").write_text(json.dumps(script))
    result = cli("run", "--goal", "GOAL.md", "--script", "s.yaml", "--json")
    ends = [e for e in events_of(result.stdout) if e["type"] == "tool_end"]
    assert ends[0]["is_error"] and "refused: .git/ is version control" in ends[0]["preview"]
    assert (project / ".git" / "config").read_text() == before
    assert not (project / "pwned").exists()


def test_a_state_folder_holding_the_project_protects_its_own_entries_not_the_project(tmp_path: Path) -> None:
    """ARREIO_HOME set to a folder the project lives in must not freeze the project: arreio's own
    entries there (config, sessions, memory, the journal, …) are protected; the project is writable."""
    home = tmp_path / "arreio-home"
    project = home / "work" / "project"
    project.mkdir(parents=True)
    (home / "config.yaml").write_text(CONFIG)
    ctx = context(project, ARREIO_HOME=str(home))
    assert not call(ctx, "write_file", path="notes.md", content="fine").is_error
    assert (project / "notes.md").read_text() == "fine"
    refused = call(ctx, "write_file", path="../../config.yaml", content=EVIL)
    assert refused.is_error and (home / "config.yaml").read_text() == CONFIG  # outside the cwd, and state besides
    assert protecting(home / "sessions" / "s.jsonl", project, {"ARREIO_HOME": str(home)}) is not None
    assert protecting(project / "notes.md", project, {"ARREIO_HOME": str(home)}) is None

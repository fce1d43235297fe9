"""Shell completion for bash, zsh and fish (real processes: the shell runs `arreio` with
`_ARREIO_COMPLETE` set), and the hint for a flag typed as a command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli

HEAVY = ("anthropic", "openai", "litellm", "numpy", "httpx2", "mcp", "pypdf", "ruamel", "arreio.engine.core.config")


def arreio(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "SHELL": "/bin/bash", **(env or {})}
    return run_cli(cwd, full, *args, timeout=60)


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o default -F _arreio_completion arreio"),
        ("zsh", "#compdef arreio"),
        ("fish", "complete --command arreio"),
    ],
)
def test_show_completion_prints_the_script(shell: str, marker: str) -> None:
    out = arreio("--show-completion", shell)
    assert out.returncode == 0, out.stderr
    assert "_ARREIO_COMPLETE" in out.stdout and marker in out.stdout


def test_unsupported_shell_is_a_usage_error() -> None:
    out = arreio("--show-completion", "tcsh")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "completion is for bash, zsh, fish" in out.stderr


def test_install_completion_writes_into_home(tmp_path: Path) -> None:
    out = arreio("--install-completion", "bash", env={"HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    script = tmp_path / ".bash_completions" / "arreio.sh"
    assert "_ARREIO_COMPLETE" in script.read_text()
    assert f"source '{script}'" in (tmp_path / ".bashrc").read_text()


PROBE = """
import json, sys
from arreio.cli.app import main
try:
    main([])
finally:
    print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [("arreio ses", "1", ["sessions"]), ("arreio config ", "2", ["list", "get", "set", "unset", "path", "edit"])],
)
def test_completion_answers_without_heavy_imports(tmp_path: Path, words: str, cword: str, expected: list[str]) -> None:
    env = {**os.environ, "_ARREIO_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": cword}
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == expected
    assert json.loads(out.stderr.strip().splitlines()[-1]) == []


def test_a_flag_typed_as_a_command_points_at_the_flag(cli) -> None:
    result = cli("version")
    assert result.exit_code == 2
    assert "Did you mean 'arreio --version'?" in result.stderr and "sessions" not in result.stderr
    typo = cli("sesions")
    assert typo.exit_code == 2 and "Did you mean 'sessions'?" in typo.stderr

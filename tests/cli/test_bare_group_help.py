"""A bare command group (`arreio`, `arreio sessions`, `arreio memory decision`) shows its help once, on
stdout, the same help `--help` shows, and exits 2 (a usage error: no command was given), as click does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli


def arreio(cwd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return run_cli(cwd, env, *args, timeout=60)


@pytest.mark.parametrize("group", [[], ["sessions"], ["memory", "decision"]], ids=["arreio", "sessions", "decision"])
def test_a_bare_group_prints_its_help_once(tmp_path: Path, arreio_env: dict, group: list[str]) -> None:
    bare = arreio(tmp_path, arreio_env, *group)
    assert bare.returncode == 2 and bare.stderr == ""
    assert bare.stdout.count("Usage:") == 1, bare.stdout
    asked = arreio(tmp_path, arreio_env, *group, "--help")
    assert asked.returncode == 0 and bare.stdout.strip() == asked.stdout.strip()

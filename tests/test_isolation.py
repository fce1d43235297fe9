"""The suite never touches the developer's own files: HOME, the user config and the working directory
are a fresh temp folder for every test (`tests/conftest.py: isolated_home`, autouse)."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from arreio.engine.core.paths import state_dir, user_config_path

REPO = Path(__file__).resolve().parent.parent


def test_home_config_and_cwd_are_a_temp_folder() -> None:
    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
    home = Path.home().resolve()
    assert home != real_home and not str(user_config_path(os.environ)).startswith(str(real_home) + os.sep)
    cwd = Path.cwd().resolve()
    assert cwd != REPO and REPO not in cwd.parents and not any(cwd.iterdir())
    assert state_dir(cwd, os.environ) == cwd / ".arreio"
    assert not [name for name in os.environ if name.startswith("ARREIO_")]


def test_each_test_gets_its_own_folder() -> None:
    # the previous test's cwd is not this one's (nothing a test writes leaks into the next)
    assert not (Path.cwd() / ".arreio").exists()

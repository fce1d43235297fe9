"""The test process's side of a warm `arreio` (tests/warm_arreio.py): the server it starts at first
use, and the command line that runs `arreio ARGS` as a fork of it.

A command starts as one of two entries, as a user's shell would start it:

- `MODULE` (`python -m arreio.cli.launch`): its working folder first on `sys.path`;
- the console script's path (`.venv/bin/arreio`, what users type): the script's folder first on
  `sys.path`, so nothing in the working folder can stand in for a module arreio imports later. The
  attack arena starts this one: an agent writes into that folder.

`warm_command` answers None where a fork cannot be what a new process would be: every command when
`ARREIO_TESTS_COLD=1`, and a command whose environment sets what Python reads only as it starts
(PYTHONPATH, a hash seed, the locale) or what the server's SDKs read as they are imported otherwise
than the server's; the test then starts a cold one."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULE = "-m"
COLD = os.environ.get("ARREIO_TESTS_COLD") == "1"

# What the warm server sets per command as Python's start-up would (tests/warm_arreio.py, `_stdio`),
# and what the SDK the server imports reads as it is imported (its log level).
_WARM_HANDLES = {"PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE"}
_READ_ON_IMPORT = ("OPENAI_LOG",)

_server: tuple[subprocess.Popen, str, tuple] | None = None  # the server, its socket, what it started with


def _startup_settings(env: Mapping[str, str]) -> tuple:
    python = sorted((k, v) for k, v in env.items() if k.startswith("PYTHON") and k not in _WARM_HANDLES)
    locale = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG") or ""
    return python, locale, [env.get(name) for name in _READ_ON_IMPORT]


def warm_server() -> tuple[str, tuple]:
    """This test process's warm server, started at first use (it ends when this process does): its
    socket, and the start-up settings its commands run with."""
    global _server
    if _server is None or _server[0].poll() is not None:
        path = os.path.join(tempfile.mkdtemp(prefix="arreio-warm-"), "socket")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        server = subprocess.Popen(
            [sys.executable, str(HERE / "warm_arreio.py"), path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        if server.stdout.readline() != b"ready\n":
            raise RuntimeError("the warm arreio server did not start")
        _server = (server, path, _startup_settings(env))
    return _server[1], _server[2]


def warm_command(env: Mapping[str, str], entry: str | Path = MODULE) -> list[str] | None:
    """The command line that runs `arreio` warm as `entry` starts it (append its arguments), or
    None where it must start cold (see the module docstring)."""
    if COLD:
        return None
    path, settings = warm_server()
    if _startup_settings(env) != settings:
        return None
    return [sys.executable, "-I", "-S", str(HERE / "warm_shim.py"), path, str(entry)]

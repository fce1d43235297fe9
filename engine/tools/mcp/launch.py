"""How a stdio MCP server is started so that nothing the agent wrote runs on the host by it.

A server runs outside the OS sandbox, with arreio's rights, unless its config says `sandbox: true`.
So, unless the user's config names a file itself:

- its **command** given by name (`python`, `npx`, `uvx`) is found on PATH entries the agent cannot
  write (`engine/programs.py`): not the project's `.venv/bin`, not `node_modules/.bin`; a command
  given as a path (`.venv/bin/python`, `./server.sh`, relative to the working directory) is the user's
  choice and is run as named;
- it **starts in a folder of arreio's own** (`<state>/mcp/`), not in the working directory: started
  there, `python -m my_server` imported the agent's `my_server.py`, and `npx pkg` ran a `pkg` from the
  agent's `node_modules/`. `cwd:` in its config (`.` for the working directory) is the user's choice.
  `${ARREIO_WORKDIR}` in `args` or `env` is the working directory, for servers that are told where
  to work (`server-filesystem ${ARREIO_WORKDIR}`);
- Python does not put the script's folder or the current folder on `sys.path` (`PYTHONSAFEPATH=1`);
- its PATH holds only the entries the agent cannot write, so what the server runs by name in turn
  is not the agent's either.

`sandbox: true` starts the server inside the run's sandbox instead (the working directory writable,
the network as `sandbox.network` says, arreio's state and `.git` read-only): then a server whose own
files lie in the project cannot reach beyond it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from arreio.engine.programs import trusted_path, trusted_which
from arreio.engine.tools.mcp.config import StdioServer, expand_vars

SAFE_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
WORKDIR_VAR = "ARREIO_WORKDIR"
# Wraps a command line in the run's sandbox (`bwrap … --`), or says why it cannot: (argv, None) or (None, why).
SandboxWrap = Callable[[list[str]], tuple[list[str] | None, str | None]]


@dataclass(frozen=True)
class Launch:
    """What `StdioServerParameters` gets: the command, its args, its environment and folder."""

    command: str
    args: list[str]
    env: dict[str, str]
    cwd: str


def launch(config: StdioServer, *, name: str, cwd: Path, env: Mapping[str, str], home: Path,
           untrusted: Sequence[Path], wrap: SandboxWrap | None = None) -> Launch:
    """How to start server `name` (module docstring). Raises RuntimeError with a reason the user can
    act on: a `${VAR}` not set, a command not found where it may be looked for, no sandbox."""
    where = f"mcp_servers.{name}"
    with_workdir = {**env, WORKDIR_VAR: str(cwd)}
    try:
        extra = expand_vars(config.env, with_workdir, where + ".env")
        args = list(expand_vars(dict(enumerate(config.args)), with_workdir, where + ".args").values())  # type: ignore[arg-type]
    except KeyError as exc:
        raise RuntimeError(exc.args[0]) from None
    full = {k: env[k] for k in SAFE_ENV if k in env}
    full["PATH"] = trusted_path(env, untrusted)
    full["PYTHONSAFEPATH"] = "1"
    full |= extra
    if config.sandbox:
        folder = cwd / config.cwd if config.cwd else cwd
    elif config.cwd:
        folder = cwd / config.cwd
    else:
        home.mkdir(parents=True, exist_ok=True)
        folder = home
    if "/" in config.command:
        command = str(cwd / config.command) if not os.path.isabs(config.command) else config.command
    else:
        found = trusted_which(config.command, env, untrusted)
        if found is None:
            raise RuntimeError(f"{where}.command '{config.command}' was not found on PATH outside the working "
                               "directory (a program there could be the agent's); give its full path to use it")
        command = found
    if config.sandbox:
        if wrap is None:
            raise RuntimeError(f"{where}.sandbox: true, but no sandbox is available to this command")
        argv, why = wrap([command, *args])
        if argv is None:
            raise RuntimeError(f"{where}.sandbox: true, but the sandbox cannot run here: {why}")
        command, args = argv[0], argv[1:]
    return Launch(command, args, full, str(folder))

"""How a stdio MCP server is started so that nothing the agent wrote runs on the host by it.

A server runs outside the OS sandbox, with arreio's rights, unless its config says `sandbox: true`.
So, unless the user's config names a file itself:

- its **command** given by name (`python`, `npx`, `uvx`) is found on PATH entries the agent cannot
  write (`engine/core/programs.py`): not the project's `.venv/bin`, not `node_modules/.bin`; a command
  given as a path (`.venv/bin/python`, `./server.sh`, relative to the working directory) is the user's
  choice and is run as named;
- it **starts in a fresh folder of arreio's own**, outside the working directory (a temporary folder:
  `npx` looks for packages in every folder above where it starts): started in the project, `python -m
  my_server` imported the agent's `my_server.py`, and `npx pkg` ran a `pkg` from the agent's
  `node_modules/`. `${ARREIO_WORKDIR}` in `args` or `env` is the working directory, for servers that
  are told where to work (`server-filesystem ${ARREIO_WORKDIR}`);
- Python does not put the script's folder or the current folder on `sys.path` (`PYTHONSAFEPATH=1`);
- its PATH holds only the entries the agent cannot write, so what the server runs by name in turn
  is not the agent's either.

A server that would still run what the agent can write — its command is a file there (`bin/server`,
`.venv/bin/python`), a file it is given lies there (`tools/server.py`), or it starts there (`cwd: .`)
— starts inside the run's sandbox (the working directory writable, the network as `sandbox.network`
says, arreio's state and `.git` read-only), so what the agent changed stays in its room; where no
sandbox can run, it is not started, and the reason says how to choose otherwise. `sandbox: true` puts
any server in the sandbox; `sandbox: false` is the user's choice to run it outside, whatever it runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from arreio.engine.core.programs import inside_any, trusted_path, trusted_which
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


def launch(
    config: StdioServer,
    *,
    name: str,
    cwd: Path,
    env: Mapping[str, str],
    home: Path,
    untrusted: Sequence[Path],
    wrap: SandboxWrap | None = None,
) -> Launch:
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
    folder = (cwd / config.cwd).resolve() if config.cwd else home
    if "/" in config.command:
        command = str(cwd / config.command) if not os.path.isabs(config.command) else config.command
    else:
        found = trusted_which(config.command, env, untrusted)
        if found is None:
            raise RuntimeError(
                f"{where}.command '{config.command}' was not found on PATH outside the working "
                "directory (a program there could be the agent's); give its full path to use it"
            )
        command = found
    reaches = agents_files(command, args, folder, cwd, untrusted)
    if config.sandbox or (config.sandbox is None and reaches):
        if wrap is None:
            raise RuntimeError(f"{where} needs the sandbox ({reaches or 'sandbox: true'}), and none is available")
        argv, why = wrap([command, *args])
        if argv is None:
            because = f"{reaches}, so it runs only in the sandbox" if reaches else "sandbox: true"
            raise RuntimeError(
                f"{where} was not started: {because}, which cannot run here ({why}); "
                f"set {where}.sandbox: false to run it outside the sandbox anyway"
            )
        command, args = argv[0], argv[1:]
        if not config.cwd:
            folder = cwd  # inside the sandbox the working directory is where a server belongs
    elif not config.cwd:
        home.mkdir(parents=True, exist_ok=True)
    return Launch(command, args, full, str(folder))


def agents_files(command: str, args: list[str], folder: Path, cwd: Path, untrusted: Sequence[Path]) -> str | None:
    """Why a server would run what the agent can write — its command, a file among its arguments, or
    its starting folder lies in a place the agent can write — or None."""
    if _inside(Path(command), untrusted):
        return f"its command {command} lies where the agent can write"
    for arg in args:
        if arg.startswith("-") or "\n" in arg:
            continue
        path = Path(arg) if os.path.isabs(arg) else folder / arg
        try:
            is_file = path.is_file()
        except (OSError, ValueError):
            continue
        if is_file and _inside(path, untrusted):
            return f"it is given {arg}, which lies where the agent can write"
    if _inside(folder, untrusted):
        return "it starts in a folder the agent can write"
    return None


def _inside(path: Path, untrusted: Sequence[Path]) -> bool:
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        real = Path(os.path.abspath(path))
    return inside_any(real, untrusted) or inside_any(Path(os.path.abspath(path)), untrusted)

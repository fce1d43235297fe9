"""Programs that run another program by name: `python -m pytest`, `uv run pytest`, `npx jest`.

A deny rule for `pytest` that `python -m pytest` walks around is no rule. `run_by(command)` is the
command a runner starts, read as the policy reads a wrapper's (`equivalents.unwrap`): the runner's own
options skipped (with their values), then the program and its arguments. It is marked implied (how it
was found), so an allow rule still has to cover the runner as spelled.

Covered: `python[3[.x]] -m MOD` (and pypy), `uv run` / `uv tool run` / `uvx`, `poetry run`, `pipenv
run`, `pdm run`, `hatch run`, `rye run`, `pipx run`, `conda run` / `mamba run` / `micromamba run`,
`npx`, `npm exec`, `pnpm exec` / `pnpm dlx`, `yarn exec` / `yarn dlx`, `bunx`, `bun x`.
"""

from __future__ import annotations

import re

from arreio.engine.walls.commands import Command

# runner → (the words after it that make it run a program, its options that take a value)
_RUNNERS: dict[str, tuple[tuple[tuple[str, ...], ...], frozenset[str]]] = {
    "uv": (
        (("run",), ("tool", "run")),
        frozenset(
            {
                "--with",
                "--with-editable",
                "--with-requirements",
                "--python",
                "-p",
                "--project",
                "--directory",
                "--env-file",
                "--extra",
                "--group",
                "--only-group",
                "--no-group",
                "--package",
                "--index",
                "--index-url",
                "--extra-index-url",
                "--from",
                "--cache-dir",
                "--config-file",
                "-C",
                "--config-setting",
            }
        ),
    ),
    "uvx": (
        ((),),
        frozenset(
            {
                "--with",
                "--with-editable",
                "--with-requirements",
                "--python",
                "-p",
                "--from",
                "--index",
                "--index-url",
                "--extra-index-url",
                "--cache-dir",
                "--config-file",
            }
        ),
    ),
    "poetry": ((("run",),), frozenset({"-C", "--directory", "-P", "--project"})),
    "pipenv": ((("run",),), frozenset({"--python"})),
    "pdm": ((("run",),), frozenset({"-p", "--project", "-L", "--lockfile", "-r", "--venv"})),
    "hatch": ((("run",),), frozenset({"-e", "--env"})),
    "rye": ((("run",),), frozenset({"--pyproject"})),
    "pipx": ((("run",),), frozenset({"--spec", "--python", "--index-url", "--pip-args"})),
    "conda": ((("run",),), frozenset({"-n", "--name", "-p", "--prefix", "--cwd"})),
    "mamba": ((("run",),), frozenset({"-n", "--name", "-p", "--prefix", "--cwd"})),
    "micromamba": ((("run",),), frozenset({"-n", "--name", "-p", "--prefix", "--cwd"})),
    "npx": (((),), frozenset({"-p", "--package", "--cache", "--registry", "--userconfig"})),
    "npm": (
        (("exec",), ("x",)),
        frozenset({"-p", "--package", "--cache", "--registry", "--userconfig", "-w", "--workspace", "--prefix"}),
    ),
    "pnpm": ((("exec",), ("dlx",)), frozenset({"-C", "--dir", "--filter", "-F", "--package", "--reporter"})),
    "yarn": ((("exec",), ("dlx",)), frozenset({"-p", "--package", "--cwd"})),
    "bunx": (((),), frozenset({"-p", "--package", "--bun"})),
    "bun": ((("x",),), frozenset({"-p", "--package"})),
}
_PYTHON = re.compile(r"(?:python|pypy)(?:\d+(?:\.\d+)*)?")
# the interpreter's own options that take a value (`python -X dev -m pytest`, `-W error`)
_PYTHON_VALUED = frozenset({"-X", "-W", "--check-hash-based-pycs"})


def run_by(command: Command) -> Command | None:
    """The command `command` runs by name, or None (not a runner, or no program named)."""
    program, args = command.program, list(command.argv[1:])
    if _PYTHON.fullmatch(program):
        return _module(command, args)
    spec = _RUNNERS.get(program)
    if spec is None:
        return None
    subcommands, takes_value = spec
    for words in subcommands:
        if tuple(args[: len(words)]) == words:
            rest = _after_options(args[len(words) :], takes_value)
            return (
                Command(tuple(rest), command.redirects, implied=f"{program} {' '.join(words)}".strip())
                if rest
                else None
            )
    return None


def _module(command: Command, args: list[str]) -> Command | None:
    """`python -m MOD ARGS` → `MOD ARGS` (`-mpytest` too); the options before `-m` skipped."""
    while args:
        arg = args.pop(0)
        if arg == "-m" and args:
            return Command(tuple(args), command.redirects, implied=f"{command.program} -m")
        if arg.startswith("-m") and len(arg) > 2:
            return Command((arg[2:], *args), command.redirects, implied=f"{command.program} -m")
        if arg in _PYTHON_VALUED:
            if args:
                args.pop(0)
        elif not arg.startswith("-") or arg in ("-", "-c"):
            return None  # a script, stdin or code: what runs is read elsewhere (equivalents._interpreter)
    return None


def _after_options(args: list[str], takes_value: frozenset[str]) -> list[str]:
    """`args` from the first word that is not the runner's own option (`--` ends them)."""
    while args:
        arg = args[0]
        if arg == "--":
            return args[1:]
        if not arg.startswith("-") or arg == "-":
            return args
        args = args[1:]
        if arg in takes_value and args:
            args = args[1:]
    return args

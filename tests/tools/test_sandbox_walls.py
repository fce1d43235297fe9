"""The walls around the agent's shell that an attacker went for first: the programs arreio finds
(bwrap), the environment (arreio's credentials), protected places that do not exist yet, `.git`
made or moved anywhere below the working directory, and real limits on a call's processes, memory,
files and /tmp. The real bwrap, real processes, real git."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arreio.engine.core.config import Settings
from arreio.engine.core.errors import ConfigError
from arreio.engine.tools.base import ToolResult
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.sandbox import availability, find_bwrap, parse_sandbox, probe_bwrap, run_sandbox
from arreio.engine.tools.sandbox.limits import find_groups
from arreio.engine.tools.shell import Shell

PATH = "/usr/bin:/bin"
_FOUND = availability({"PATH": PATH})
requires_sandbox = pytest.mark.skipif(not _FOUND.ok, reason=f"the OS sandbox cannot start here: {_FOUND.reason}")
requires_groups = pytest.mark.skipif(find_groups().pids is None, reason="no control group can be made here")


def shell(
    cwd: Path,
    command: str,
    *,
    env: dict[str, str] | None = None,
    state: Path | None = None,
    timeout_s: float | None = None,
    **sandbox,
) -> ToolResult:
    ctx = RunContext(
        cwd=cwd,
        env={"PATH": PATH, "HOME": str(cwd.parent / "home"), **(env or {})},
        settings=Settings(sandbox=sandbox),
        state_dir=state,
        run_id="r1",
    )
    arguments = {"command": command, **({"timeout_s": timeout_s} if timeout_s else {})}
    return asyncio.run(run_tool(ToolRegistry([Shell()]), "shell", arguments, ctx))


STAND_IN = (
    '#!/bin/sh\n# drops every option and runs what follows --\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n'
)


# -- the bwrap arreio runs ------------------------------------------------------------------------
@requires_sandbox
def test_a_bwrap_planted_in_the_working_directory_is_never_run(root: Path) -> None:
    venv_bin = root / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "bwrap").write_text(STAND_IN)
    (venv_bin / "bwrap").chmod(0o755)
    env = {"PATH": f"{venv_bin}:{PATH}"}
    assert find_bwrap(env, [root]) == "/usr/bin/bwrap"
    result = shell(root, "touch ../escaped.txt; echo $$", env=env)
    assert not (root.parent / "escaped.txt").exists()
    assert result.content.splitlines()[-2] == "2"  # a PID namespace of its own: bwrap's child, then bash


def test_a_relative_or_empty_path_entry_is_passed_over(root: Path) -> None:
    (root / "bwrap").write_text(STAND_IN)
    (root / "bwrap").chmod(0o755)
    for path in ("", ".", "bin", f":{PATH}"):
        found = find_bwrap({"PATH": path}, [root])
        assert found is None or not found.startswith(str(root))


@requires_sandbox
def test_the_probe_sees_through_a_stand_in(tmp_path: Path) -> None:
    stand_in = tmp_path / "bwrap"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    said = probe_bwrap(str(stand_in))
    assert not said.ok and "without a sandbox" in said.reason
    assert probe_bwrap("/usr/bin/bwrap").ok


# -- arreio's credentials ---------------------------------------------------------------------------
@requires_sandbox
def test_provider_keys_and_secret_shaped_variables_stay_with_arreio(root: Path) -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghijklmnop",
        "OPENAI_API_KEY": "sk-proj-abcdefghijklmnop",
        "GROQ_API_KEY": "gsk_abcdefghijklmnop",
        "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz012345",
        "DATABASE_URL": "postgres://app:s3cretpw@db.internal/app",
        "NPM_TOKEN": "npm_abcdefghijklmnop",
        "MYAPP_SECRET": "value-that-is-secret",
        "EDITOR": "vim",
        "LANG": "C.UTF-8",
    }
    result = shell(root, "env | sort", env=env)
    shown = result.content
    for name in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GROQ_API_KEY",
        "GITHUB_TOKEN",
        "DATABASE_URL",
        "NPM_TOKEN",
        "MYAPP_SECRET",
    ):
        assert f"{name}=" not in shown
    assert "EDITOR=vim" in shown and "LANG=C.UTF-8" in shown
    passed = shell(root, "env | sort", env=env, env_passthrough=["NPM_TOKEN", "MYAPP_*"]).content
    assert "NPM_TOKEN=npm_" in passed and "MYAPP_SECRET=" in passed and "ANTHROPIC_API_KEY" not in passed


def test_a_provider_key_cannot_be_passed_through() -> None:
    with pytest.raises(ConfigError, match="never passed"):
        parse_sandbox({"env_passthrough": ["OPENAI_API_KEY"]})


# -- protected places that do not exist yet --------------------------------------------------------
SPLIT_NAME = (
    "python3 -c \"import os; d='.arr'+'eio'; os.makedirs(d, exist_ok=True); "
    "open(d+'/config.yaml','w').write('sandbox: {mode: off}')\""
)


@requires_sandbox
def test_a_state_folder_elsewhere_leaves_no_door_at_dot_arreio(tmp_path: Path, root: Path) -> None:
    elsewhere = tmp_path / "state"
    shell(root, SPLIT_NAME, env={"ARREIO_HOME": str(elsewhere)}, state=elsewhere)
    assert not (root / ".arreio" / "config.yaml").exists()


@requires_sandbox
def test_the_user_config_cannot_be_planted_from_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    command = "mkdir -p .config/arreio && echo 'sandbox: {mode: off}' > .config/arreio/config.yaml; echo ran"
    result = shell(home, command, env={"HOME": str(home)})
    assert "ran" in result.content and not (home / ".config" / "arreio" / "config.yaml").exists()
    result = shell(
        home,
        "echo 'sandbox: {mode: off}' > cfg/arreio/config.yaml; echo ran",
        env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / "cfg")},
    )
    assert not (home / "cfg" / "arreio" / "config.yaml").exists()


@requires_sandbox
def test_a_state_folder_that_is_the_working_directory_keeps_its_config(root: Path) -> None:
    result = shell(root, SPLIT_NAME.replace("d='.arr'+'eio'; ", "d='.'; "), env={"ARREIO_HOME": str(root)}, state=root)
    assert not (root / "config.yaml").exists()
    assert "refused: config.yaml may not be created" in result.content and result.is_error


# -- .git anywhere below --------------------------------------------------------------------------
def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PATH": PATH, "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)


@requires_sandbox
@pytest.mark.parametrize(
    "plant",
    [
        "git init -q sub && git -C sub config core.fsmonitor 'touch {marker}'",
        "mkdir -p sub/.git && cp -r {repo}/.git/. sub/.git/ && git -C sub config core.fsmonitor 'touch {marker}'",
        "mkdir -p sub && printf 'gitdir: {repo}/.git\\n' > sub/.git",
        "git init -q . && git config core.fsmonitor 'touch {marker}'",
        # no .git at all: a folder shaped as a git folder, which git uses as the repository it is in
        "git init -q --bare sub && git --git-dir=sub config core.bare false && "
        "git --git-dir=sub config core.worktree .. && git --git-dir=sub config core.fsmonitor 'touch {marker}'",
    ],
)
def test_no_git_can_be_made_below_the_working_directory(tmp_path: Path, root: Path, plant: str) -> None:
    outer = tmp_path  # a repository around the working directory, as in a sub-folder of a project
    assert _git("init", "-q", cwd=outer).returncode == 0
    other = tmp_path / "other"
    other.mkdir()
    assert _git("init", "-q", cwd=other).returncode == 0
    marker = tmp_path / "PWNED"
    result = shell(root, plant.format(marker=marker, repo=other) + "; echo planted")
    assert "planted" in result.content
    assert "refused:" in result.content and "may not be created" in result.content
    assert not (root / "sub" / ".git").exists() and not (root / ".git").exists()
    assert not (root / "sub" / "HEAD").exists()
    (root / "sub").mkdir(exist_ok=True)
    _git("status", cwd=root / "sub")
    _git("status", cwd=root)
    assert not marker.exists()


@requires_sandbox
def test_a_nested_repository_cannot_be_moved_aside_and_replaced(root: Path) -> None:
    nested = root / "vendor" / "lib"
    nested.mkdir(parents=True)
    assert _git("init", "-q", cwd=nested).returncode == 0
    (nested / "keep.txt").write_text("mine\n")
    result = shell(root, "mv vendor/lib vendor/old; mkdir -p vendor/lib; git init -q vendor/lib; echo done")
    assert "done" in result.content
    assert (nested / "keep.txt").read_text() == "mine\n" and not (root / "vendor" / "old").exists()
    assert (nested / ".git" / "HEAD").exists()


# -- limits ----------------------------------------------------------------------------------------
def _alive_with(tag: str) -> list[str]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    out.append(entry.name)
            except OSError:
                continue
    return [pid for pid in out if pid != str(os.getpid())]


# `{bomb}` run until the call's process group has refused a process (its pids.events `max` count, the
# counter the harness reads, found through /proc/self/cgroup: v1 or v2), then ended with its whole
# process group (as `timeout` does at 8 s, the cap); the wait uses shell builtins only, which need no
# new process. A bare `timeout 8` kept three of the bombs 8 s each (perl's spinning on both cores).
# Where the counter cannot be read, `timeout 8` ends it as before.
UNTIL_REFUSED = (
    "while IFS=: read -r _ kind group; do"
    ' [ "$kind" = pids ] && events=/sys/fs/cgroup/pids$group/pids.events;'
    ' [ -z "$kind" ] && : "${{events:=/sys/fs/cgroup$group/pids.events}}"; done < /proc/self/cgroup; '
    "timeout 8 sh -c {bomb} & "
    'until {{ read -r _ refused < "$events"; }} 2>/dev/null && [ "$refused" != 0 ]'
    " || ! kill -0 $! 2>/dev/null; do :; done; "
    "kill $! 2>/dev/null; wait"
)


@requires_sandbox
@requires_groups
@pytest.mark.parametrize(
    "bomb",
    [
        "perl -e 'fork while 1'",
        (
            "python3 -c 'import multiprocessing as m, time; "
            "[m.Process(target=time.sleep, args=(100,)).start() for _ in iter(int, 1)]'"
        ),
        "while true; do sleep 100 & done",
        "yes 1 | head -c 20000 | xargs -P0 -n1 sleep 100",
    ],
)
def test_a_fork_bomb_meets_the_process_limit(root: Path, bomb: str) -> None:
    result = shell(
        root, f"{UNTIL_REFUSED.format(bomb=repr(bomb))}; echo survived", timeout_s=20, limits={"processes": 64}
    )
    assert "the process limit (64) was reached" in result.content
    assert _alive_with("sleep 100") == []


@requires_sandbox
def test_memory_file_size_and_tmp_are_capped(root: Path) -> None:
    grab = "python3 -c 'b = bytearray(600 << 20); print(len(b))'"
    result = shell(root, grab, limits={"memory_mb": 128})
    assert "629145600" not in result.content and result.is_error
    big = shell(root, "head -c 3000000 /dev/zero > big.bin; echo $?; stat -c %s big.bin", limits={"file_mb": 1})
    assert (root / "big.bin").stat().st_size == 1 << 20 and big.content.splitlines()[0] != "0"
    tmp = shell(root, "head -c 20000000 /dev/zero > /tmp/fill; df -k /tmp | tail -1", limits={"tmp_mb": 8})
    assert "No space left on device" in tmp.content


def test_the_run_sandbox_is_made_once_per_run(root: Path) -> None:
    ctx = RunContext(cwd=root, env={"PATH": PATH}, run_id="r1")
    assert run_sandbox(ctx) is run_sandbox(ctx.for_call(turn=3))


# -- saying so, in every output mode -------------------------------------------------------------
def _shell_script(work: Path) -> None:
    (work / "script.json").write_text(
        '[{"tool_calls": [{"name": "shell", "arguments": {"command": "echo hi"}}]}, {"text": "done"}]'
    )


@pytest.mark.parametrize("output", ["text", "json", "live"])
def test_without_a_sandbox_every_output_mode_says_so_on_stderr(tmp_path: Path, arreio_env: dict, output: str) -> None:
    from tests.conftest import run_cli

    work = tmp_path / "work"
    work.mkdir()
    _shell_script(work)
    nobin = tmp_path / "bin"
    nobin.mkdir()
    for tool in ("bash", "sh", "git"):
        (nobin / tool).symlink_to(Path("/usr/bin" if Path(f"/usr/bin/{tool}").exists() else "/bin") / tool)
    done = run_cli(
        work,
        {**arreio_env, "PATH": str(nobin)},
        "run",
        "Say hi",
        "--script",
        "script.json",
        "--yes",
        "--output",
        output,
    )
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "UNSANDBOXED" in line]
    assert len(said) == 1 and said[0].startswith("arreio: warning: shell runs UNSANDBOXED")


def test_a_config_that_turns_the_sandbox_off_says_so_on_every_run(tmp_path: Path, arreio_env: dict) -> None:
    from tests.conftest import run_cli

    work = tmp_path / "work"
    (work / ".arreio").mkdir(parents=True)
    (work / ".arreio" / "config.yaml").write_text("sandbox: {mode: off}\n")
    _shell_script(work)
    for _ in range(2):
        done = run_cli(work, arreio_env, "run", "Say hi", "--script", "script.json", "--yes", "--output", "text")
        assert done.returncode == 0, done.stderr
        assert "arreio: warning: sandbox.mode: off (set in config)" in done.stderr


# -- arreio's own Python environment ---------------------------------------------------------------
@requires_sandbox
@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="arreio does not run from a virtualenv here")
def test_the_virtualenv_arreio_runs_from_is_read_only(tmp_path: Path) -> None:
    """A project's `.venv` holding arreio lies in the working directory; a `.pth` file there would run
    at arreio's next start, on the host."""
    venv = Path(sys.prefix)
    planted = venv / f"arreio-test-{uuid.uuid4().hex[:8]}.pth"
    try:
        result = shell(venv.parent, f"echo 'import os' > {planted}; echo done", state=tmp_path / "state")
        assert "done" in result.content and not planted.exists()
        from arreio.engine.walls.protected import write_refusal

        said = write_refusal("write_file", planted, venv.parent, {"HOME": str(tmp_path)}, [])
        assert said is not None and "the Python environment arreio runs from" in said
    finally:
        planted.unlink(missing_ok=True)


# -- no unix socket with the network off -----------------------------------------------------------
@requires_sandbox
@pytest.mark.parametrize("network", [False, True])
def test_a_unix_socket_outside_run_is_no_door_with_the_network_off(root: Path, network: bool) -> None:
    import socket

    path = Path("/var/tmp") / f"arreio-agent-{uuid.uuid4().hex[:8]}.sock"  # an ssh-agent's kind of socket
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen(1)
        try:
            connect = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({str(path)!r}); print('connected')"
            pair = "import socket; a, b = socket.socketpair(); a.send(b'x'); print('pair', b.recv(1))"
            real = os.path.realpath(sys.executable)
            result = shell(root, f'{real} -c "{connect}"; {real} -c "{pair}"', network=network)
        finally:
            path.unlink(missing_ok=True)
    assert ("connected" in result.content) is network
    assert "pair b'x'" in result.content  # pipes between processes keep working


@requires_sandbox
@pytest.mark.parametrize("name", [".gitignore", "sub/.gitattributes"])
def test_a_fifo_where_git_reads_its_rules_is_moved_away(root: Path, name: str) -> None:
    """git opens .gitignore and .gitattributes wherever it walks: a FIFO there would block the
    checkpoint after the call (and the user's next git command) until something wrote to it."""
    folder = os.path.dirname(name) or "."
    result = shell(root, f"mkdir -p {folder} && mkfifo {name} && echo made")
    assert "made" in result.content and "refused:" in result.content
    assert not os.path.lexists(root / name)
    (root / ".gitignore").write_text("build/\n")  # a real one stays
    assert "refused" not in shell(root, "echo x > notes.md").content and (root / ".gitignore").exists()

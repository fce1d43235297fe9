"""A warm `arreio` (tests/warm_arreio.py) is what a cold one is to the test that starts it: the same
output, exit codes, folder, environment and input; killing it kills the command."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli
from tests.warm_client import HERE, MODULE, warm_command, warm_server

COMMANDS = (
    ("--version",),
    ("--help",),
    ("memory", "decision", "list"),
    ("run", "--no-such-flag"),
    ("run", "--goal", "missing.md"),
    ("run", "--offline", "--goal", "G.md", "--json"),
    ("run", "Say hello.", "--model", "openai/gpt-4o"),  # OPENAI_BASE_URL: nothing listens there
)


def _same_but_ids(text: str, work: Path) -> str:
    """`text` without what differs from one run to the next: its folder, ids, times and durations."""
    import re

    text = text.replace(str(work), "WORK")
    return re.sub(r"\d{8}-\d{6}-[0-9a-f]+|\d{4}-\d\d-\d\dT[\d:.+Z-]+|\d+(\.\d+)? ?(ms|s)\b", "·", text)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: " ".join(args))
def test_a_warm_command_answers_as_a_cold_one(tmp_path: Path, args) -> None:
    answers = {}
    for fresh in (True, False):
        work = tmp_path / ("cold" if fresh else "warm")  # one length: the prompt's token count holds the path
        (work / ".arreio").mkdir(parents=True)
        (work / "G.md").write_text("# g\n\nSay hello.\n")
        (work / ".arreio" / "config.yaml").write_text("retry: {max_attempts: 1}\n")
        env = {**cli_env(work / "home"), "COLUMNS": "100", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
        env["OPENAI_API_KEY"] = "sk-test"
        out = run_cli(work, env, *args, fresh=fresh)
        answers[fresh] = (out.returncode, _same_but_ids(out.stdout, work), _same_but_ids(out.stderr, work))
    assert answers[False] == answers[True]


def test_folder_environment_input_and_bytes_reach_the_command(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    """The prompt comes from stdin, the project from the folder and the model from the environment;
    an argument that is no UTF-8 arrives as the same bytes (it names the missing goal file)."""
    (tmp_path / ".arreio").mkdir()
    env = {**arreio_env, "ARREIO_MODEL": "offline"}
    piped = run_cli(tmp_path, env, "run", "--json", "-", input="say hi\n")
    assert piped.returncode == 0, piped.stderr
    assert '"type": "unit_end"' in piped.stdout or '"type":"unit_end"' in piped.stdout
    assert list((tmp_path / ".arreio" / "runs").iterdir())
    odd = run_cli(tmp_path, arreio_env, "run", "--goal", b"caf\xe9.md", text=False)
    cold = run_cli(tmp_path, arreio_env, "run", "--goal", b"caf\xe9.md", text=False, fresh=True)
    assert (odd.returncode, odd.stderr) == (cold.returncode, cold.stderr) and odd.returncode != 0


def _commands_in(folder: Path) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.readlink(f"/proc/{pid}/cwd") == str(folder):
                    found.append(int(pid))
            except OSError:
                continue
    return found


def _a_waiting_chat(work: Path, env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    """A warm `arreio chat` waiting for a line nobody writes: its shim, and the command's pid."""
    (work / ".arreio").mkdir()
    shim = subprocess.Popen(
        [sys.executable, "-I", "-S", str(HERE / "warm_shim.py"), warm_server()[0], MODULE, "chat"],
        cwd=work,
        env={**env, "ARREIO_MODEL": "offline"},
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while len(_commands_in(work)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    (command,) = [pid for pid in _commands_in(work) if pid != shim.pid]
    return shim, command


def test_killing_the_started_process_kills_the_command(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    shim, command = _a_waiting_chat(tmp_path, arreio_env)
    shim.kill()
    shim.wait()
    deadline = time.monotonic() + 60
    while command in _commands_in(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert command not in _commands_in(tmp_path)
    shim.stdin.close()


def test_a_command_killed_by_a_signal_ends_its_starter_by_that_signal(tmp_path: Path, arreio_env) -> None:
    shim, command = _a_waiting_chat(tmp_path, arreio_env)
    os.kill(command, signal.SIGKILL)
    assert shim.wait(timeout=60) == -signal.SIGKILL
    shim.stdin.close()


def test_what_python_reads_only_as_it_starts_gets_a_cold_start(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    """A PYTHONPATH the warm server did not start with (here: a sitecustomize) still takes effect."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.stderr.write('sitecustomize ran\\n')\n")
    (tmp_path / ".arreio").mkdir()
    env = {**arreio_env, "PYTHONPATH": str(site)}
    out = run_cli(tmp_path, env, "--version")
    assert out.returncode == 0 and "sitecustomize ran" in out.stderr


def test_an_sdk_s_log_level_from_the_environment_takes_effect(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    """The server has imported the model SDKs, which read their log level as they are imported: a
    command that sets one (OPENAI_LOG) starts cold, and the SDK logs as it would for a user."""
    (tmp_path / ".arreio").mkdir()
    (tmp_path / ".arreio" / "config.yaml").write_text("retry: {max_attempts: 1}\n")
    env = {**arreio_env, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-test"}
    args = ("run", "Say hello.", "--model", "openai/gpt-4o")
    quiet, logged = run_cli(tmp_path, env, *args), run_cli(tmp_path, {**env, "OPENAI_LOG": "debug"}, *args)
    assert quiet.returncode == logged.returncode != 0
    assert "cannot reach http://127.0.0.1:9" in quiet.stderr and "openai._base_client" not in quiet.stderr
    assert "openai._base_client" in logged.stderr


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="prlimit (util-linux) is not installed")
def test_a_resource_limit_the_command_is_started_under_reaches_it(tmp_path: Path, arreio_env: dict[str, str]) -> None:
    """`prlimit --fsize` in front of a warm command limits the command (a fork of the server), as it
    limits a cold one: the session's first lines meet it."""
    (tmp_path / ".arreio").mkdir()
    env = {**arreio_env, "ARREIO_MODEL": "offline"}
    answers = []
    for fresh in (False, True):
        done = run_cli(tmp_path, env, "run", "Say hello.", fresh=fresh, under=["prlimit", "--fsize=1000", "--"])
        answers.append((done.returncode, done.stderr))
    assert answers[0] == answers[1] and answers[0][0] != 0


def test_a_console_script_command_imports_nothing_from_its_folder(tmp_path: Path) -> None:
    """Started as the console script (the attack arena's entry), a warm command's `sys.path` starts
    with the script's folder, as a cold one's does: a module the agent wrote into the project under
    the name of one arreio imports later is never run. Started as `python -m`, the project folder
    comes first and some are (so the plant would catch a wrong `sys.path`)."""
    console = Path(sys.executable).parent / "arreio"
    if not console.exists():
        pytest.skip(f"the arreio console script is not installed next to the interpreter ({console})")
    work = tmp_path / "work"
    (work / ".arreio").mkdir(parents=True)
    env = {**cli_env(tmp_path / "home"), "ARREIO_MODEL": "offline"}
    args = ("doctor",)  # it imports what no other command does (tiktoken, pygments, httpx): after the fork
    learned = subprocess.run(  # what a run imports, from Python's own account of a cold one
        [str(console), *args], cwd=work, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, capture_output=True, text=True
    )
    assert learned.returncode == 0, learned.stderr
    imports = [line.split("|")[-1].strip() for line in learned.stderr.splitlines() if "import time:" in line]
    names = {name.split(".")[0] for name in imports}
    names -= {"", "__future__", "builtins", "sys"}
    assert len(names) > 50
    for name in names:
        (work / f"{name}.py").write_text(f"open({f'imported-{name}'!r}, 'w').close()\n")

    def planted_ran(entry: str | Path) -> list[str]:
        argv = warm_command(env, entry)
        if argv is None:
            pytest.skip("every command starts cold here (ARREIO_TESTS_COLD=1)")
        subprocess.run([*argv, *args], cwd=work, env=env, capture_output=True, timeout=120)
        ran = sorted(p.name for p in work.glob("imported-*"))
        for marker in work.glob("imported-*"):
            marker.unlink()
        return ran

    assert planted_ran(console) == []
    assert planted_ran(MODULE) != []


def test_the_warm_server_leaves_no_socket_behind(tmp_path: Path) -> None:
    """A server whose test process is gone removes its socket and folder."""
    folder = tmp_path / "warm"
    folder.mkdir()
    server = subprocess.Popen(
        [sys.executable, str(HERE / "warm_arreio.py"), str(folder / "socket")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert server.stdout.readline() == b"ready\n"
    assert (folder / "socket").exists()
    server.stdin.close()
    assert server.wait(timeout=60) == 0
    assert not folder.exists()

"""shell: real bash subprocesses — exit codes, timeouts that kill the group, caps, blocklist, env."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from arreio.engine.core.config import Settings
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.shell import HeadTail, Shell, blocked_by


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); it is dead for our purpose
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def live_group_members(pgid: int) -> list[int]:
    """Pids in process group `pgid` that are not zombies (PID 1 in a container may not reap)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, _ppid, pgrp = (entry / "stat").read_text().rsplit(") ", 1)[1].split()[:3]
        except (OSError, IndexError, ValueError):
            continue
        if int(pgrp) == pgid and state != "Z":
            members.append(int(entry.name))
    return members


def test_output_and_exit_code_zero(call, root: Path) -> None:
    (root / "f.txt").write_text("x")
    result = call("shell", command="ls && echo done >&2")
    assert not result.is_error
    assert result.content == "f.txt\ndone\nexit code: 0"


def test_nonzero_exit_is_error(call) -> None:
    result = call("shell", command="echo oops; exit 3")
    assert result.is_error
    assert result.content == "oops\nexit code: 3"


def test_no_output(call) -> None:
    assert call("shell", command="true").content == "(no output)\nexit code: 0"


def test_stdin_is_closed(call) -> None:
    result = call("shell", command="cat; echo after")
    assert result.content == "after\nexit code: 0"


# The two tests below read `$$` and `$!` from outside: unsandboxed (`sandbox.mode: off`, or no
# bwrap) those are host pids. Inside the sandbox they are PID-namespace pids (the shell is 2), so the
# sandboxed versions live in test_sandbox.py and find their processes by scanning /proc instead.
UNSANDBOXED = Settings(sandbox={"mode": "off"})


def test_timeout_kills_the_process_group(call, root: Path) -> None:
    # 10-minute sleeps: a call that waited for them holds the test past its timeout (no clock asserted)
    result = call(
        "shell",
        RunContext(cwd=root, env={"PATH": "/usr/bin:/bin"}, settings=UNSANDBOXED),
        command="echo $$ > shell.pid; echo started; sleep 600 & echo $! > child.pid; sleep 600",
        timeout_s=1,
    )
    assert result.is_error
    assert "started" in result.content
    assert "timed out after 1 s" in result.content
    assert result.preview == "timed out after 1 s: started"  # the tool_end line says it (it said "started")
    child = int((root / "child.pid").read_text())
    deadline = time.monotonic() + 60  # a wait, not a bound: a killed child is gone at once
    while pid_alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(child)
    group = int((root / "shell.pid").read_text())  # start_new_session: the shell leads its group
    assert live_group_members(group) == []


def test_timeout_default_from_settings(call, root: Path) -> None:
    ctx = RunContext(cwd=root, env={}, settings=Settings(tools={"shell_timeout_s": 0.5}))
    result = call("shell", ctx, command="sleep 30")
    assert result.is_error and "timed out after 0.5 s" in result.content
    assert result.preview == "timed out after 0.5 s (no output)"  # it once read "(no output)"


def test_cancel_kills_the_process_group(root: Path) -> None:
    registry = ToolRegistry([Shell()])
    ctx = RunContext(cwd=root, env={}, settings=UNSANDBOXED)

    async def scenario() -> None:
        task = asyncio.create_task(run_tool(registry, "shell", {"command": "echo $$ > shell.pid; sleep 30"}, ctx))
        for _ in range(100):
            await asyncio.sleep(0.05)
            if (root / "shell.pid").exists() and (root / "shell.pid").read_text().strip():
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    pid = int((root / "shell.pid").read_text())
    deadline = time.monotonic() + 3
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid)


def test_output_cap_keeps_head_and_tail(root: Path, call) -> None:
    ctx = RunContext(cwd=root, env={"PATH": "/usr/bin:/bin"}, settings=Settings(tools={"shell_output_cap": 1000}))
    result = call("shell", ctx, command="echo FIRST; seq 1 20000; echo LAST")
    assert not result.is_error
    assert result.content.startswith("FIRST\n1\n2\n")
    assert result.content.endswith("20000\nLAST\nexit code: 0")
    assert "chars omitted …]" in result.content
    assert len(result.content) < 1200


def test_head_tail_counts_what_it_dropped() -> None:
    buf = HeadTail(10)
    for piece in (b"abcde", b"fghij", b"klmno", "é".encode()[:1]):
        buf.feed(piece)
    buf.feed("é".encode()[1:], final=True)  # a character split across reads stays whole
    assert buf.render() == "abcde\n[… 6 chars omitted …]\nlmnoé"
    small = HeadTail(100)
    small.feed(b"short", final=True)
    assert small.render() == "short"


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("rm -rf /", "rm -rf /"),
        ("sudo rm -rf --no-preserve-root /", "rm -rf /"),
        ("rm -r -f /*", "rm -rf /"),
        ("rm -fr ~", "rm -rf ~"),
        ("cd x && rm -rf $HOME/", "rm -rf ~"),
        ("mkfs.ext4 /dev/sda1", "mkfs"),
        ("dd if=/dev/zero of=/dev/sda bs=1M", "dd of=/dev/"),
        (":(){ :|:& };:", "fork bomb"),
        ("sudo shutdown -h now", "shutdown"),
        ("echo bye; reboot", "shutdown"),
        ("chmod -R 777 /", "chmod -R 777 /"),
    ],
)
def test_blocklist_matches(command: str, rule: str) -> None:
    found = blocked_by(command)
    assert found is not None and found.name == rule


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf ./build",
        "rm -rf /tmp/work/build",
        "rm -rf build/",
        "dd if=a of=/dev/null",
        "grep -r reboot docs/",
        "echo 'shutdown is a word'",
        "chmod -R 755 ./bin",
        "mkdir -p out",
    ],
)
def test_blocklist_lets_ordinary_commands_through(command: str) -> None:
    assert blocked_by(command) is None


def test_blocklisted_command_is_refused_before_running(call, root: Path) -> None:
    result = call("shell", command="touch ran.txt; rm -rf /")
    assert result.is_error
    assert "blocklist rule 'rm -rf /'" in result.content
    assert not (root / "ran.txt").exists()


def test_env_is_passed_explicitly(root: Path, call) -> None:
    assert "ARREIO_ONLY_IN_CTX" not in os.environ
    before = dict(os.environ)
    ctx = RunContext(cwd=root, env={"ARREIO_ONLY_IN_CTX": "hello", "PATH": "/usr/bin:/bin"})
    result = call("shell", ctx, command='echo "v=$ARREIO_ONLY_IN_CTX"; echo "h=${HOME:-unset}"')
    assert result.content.splitlines()[:2] == ["v=hello", "h=unset"]
    assert dict(os.environ) == before


def test_runs_in_the_working_directory(call, root: Path) -> None:
    assert call("shell", command="pwd").content.splitlines()[0] == str(root)


def test_timeout_above_max_is_capped(call) -> None:
    result = call("shell", command="echo hi", timeout_s=5000)
    assert "[timeout capped at 600 s]" in result.content
    assert result.content.endswith("exit code: 0")


def test_background_child_holding_pipe_does_not_hang(call) -> None:
    # a child holding the pipe for 10 minutes: waited for, the call would end in its own timeout instead
    result = call("shell", command="sleep 600 & echo parent done")
    assert result.content.startswith("parent done")
    assert result.content.endswith("exit code: 0")


def _processes_running(marker: str) -> list[int]:
    """Live (not zombie) pids whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(") ", 1)[1][0]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def test_cancel_while_the_process_starts_kills_what_it_started(root: Path) -> None:
    """Ctrl-C landing while the shell is being spawned (the turn shows `● shell`, the process exists,
    asyncio is still connecting its pipes): asyncio killed only the leader, so the command's child
    ran on, parented to init (a sandbox's inner bwrap likewise). The whole group dies now."""
    registry = ToolRegistry([Shell()])
    ctx = RunContext(cwd=root, env={}, settings=UNSANDBOXED)
    marker = f"{os.getpid() % 1000 + 41}.{time.monotonic_ns() % 100000}"  # `sleep 1041.12345`: ours alone

    async def scenario() -> None:
        task = asyncio.create_task(run_tool(registry, "shell", {"command": f"sleep {marker}; true"}, ctx))
        for _ in range(200):  # one loop step at a time, until the spawn has forked bash
            await asyncio.sleep(0)
            if _processes_running(marker):
                break
        # Not yielding to the loop: the task is still inside the spawn. Wait (blocking) for bash to
        # start its child, so there is a child to leak.
        deadline = time.monotonic() + 5
        while len(_processes_running(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(_processes_running(marker)) == 2, "bash and its sleep did not both start"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    deadline = time.monotonic() + 3
    while _processes_running(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_running(marker) == []

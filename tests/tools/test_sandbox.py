"""The OS sandbox for shell (docs/architecture.md invariant 10), with the real bwrap and real processes: writes
only in the working directory, protected paths read-only inside it, no network unless allowed, a
private /tmp, no process outliving its call; and, where it cannot start, one warning per run."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from arreio.engine.core.config import Settings
from arreio.engine.core.errors import ConfigError
from arreio.engine.features.sandbox import SandboxFeature
from arreio.engine.providers.testing import FixedClock, ScriptedProvider, provider_factory
from arreio.engine.run.pipeline import PipelineDeps, RunOptions, run_to_end
from arreio.engine.tools.base import ToolResult
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.sandbox import (
    Availability,
    SandboxPlan,
    SandboxSettings,
    availability,
    bwrap_args,
    parse_sandbox,
    refusal_hint,
)
from arreio.engine.tools.shell import Shell

PATH = "/usr/bin:/bin"
_FOUND = availability({"PATH": PATH})
requires_sandbox = pytest.mark.skipif(not _FOUND.ok, reason=f"the OS sandbox cannot start here: {_FOUND.reason}")


def refuse(bwrap: str) -> Availability:
    """A probe for a machine where bwrap is installed but user namespaces are refused."""
    return Availability(bwrap, "bubblewrap 0.8.0", "bubblewrap cannot start a sandbox here: namespaces refused")


def shell(
    cwd: Path, command: str, *, env: dict[str, str] | None = None, probe=None, timeout_s: float | None = None, **sandbox
) -> ToolResult:
    ctx = RunContext(cwd=cwd, env={"PATH": PATH, **(env or {})}, settings=Settings(sandbox=sandbox))
    arguments = {"command": command, **({"timeout_s": timeout_s} if timeout_s else {})}
    return asyncio.run(run_tool(ToolRegistry([Shell(probe)]), "shell", arguments, ctx))


def tagged(tag: str) -> list[int]:
    """Live host pids whose command line holds `tag` (a PID namespace hides its own numbers: look by name)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(") ", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if tag in cmdline and state != "Z" and entry.name != str(os.getpid()):
            pids.append(int(entry.name))
    return pids


def gone(tag: str, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not tagged(tag)


def sleeper(tag: str) -> str:
    """A `setsid` background child that survives a plain process-group kill, named so /proc finds it."""
    return f"setsid bash -c 'exec -a {tag} sleep 300' >/dev/null 2>&1 &"


# -- pure parts -----------------------------------------------------------------------------------
def test_the_bwrap_argument_list(tmp_path: Path) -> None:
    cwd, state, git = tmp_path / "w", tmp_path / "w" / ".arreio", tmp_path / "w" / ".git"
    outside = Path("/home/someone/.config/arreio")
    args = bwrap_args(cwd, SandboxSettings(), [state, git, outside], [])
    assert args == [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--size",
        str(1024 << 20),
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/run",
        "--unshare-pid",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        "--unshare-net",
        "--bind",
        str(cwd),
        str(cwd),
        "--ro-bind",
        str(state),
        str(state),
        "--ro-bind",
        str(git),
        str(git),
        "--chdir",
        str(cwd),
    ]  # the user config outside the working directory is read-only already (the whole / is)
    shared = bwrap_args(cwd, SandboxSettings(network=True, mode="read-only"), [], [Path("/cache")])
    assert "--unshare-net" not in shared and "/run" not in shared
    assert shared[shared.index(str(cwd)) - 1] == "--ro-bind" and "/cache" not in shared  # read-only: no writable roots


def test_the_section_is_validated_like_the_others() -> None:
    assert parse_sandbox(None) == SandboxSettings(mode="workspace-write", network=False)
    with pytest.raises(ConfigError, match=r"invalid setting 'sandbox\.mode'"):
        parse_sandbox({"mode": "danger"})
    with pytest.raises(ConfigError, match=r"unknown setting 'sandbox\.netwrok' \(did you mean 'sandbox\.network'\?\)"):
        parse_sandbox({"netwrok": True})
    with pytest.raises(ConfigError, match="must be an absolute path"):
        parse_sandbox({"writable_roots": ["build"]})


def test_the_hint_names_the_sandbox_only_for_its_own_refusals() -> None:
    plan = SandboxPlan("/usr/bin/bwrap", [], SandboxSettings())
    assert "only the working directory is writable" in refusal_hint(
        "touch: cannot touch 'x': Read-only file system", plan
    )
    read_only = SandboxPlan("b", [], SandboxSettings(mode="read-only"))
    assert "nothing is writable" in refusal_hint("Permission denied", read_only)
    assert "network is off" in refusal_hint("curl: (6) Could not resolve host: example.com", plan)
    assert refusal_hint("Could not resolve host", SandboxPlan("b", [], SandboxSettings(network=True))) is None
    assert refusal_hint("all 12 tests passed", plan) is None


# -- the real sandbox -----------------------------------------------------------------------------
@requires_sandbox
def test_writes_outside_the_working_directory_fail(root: Path) -> None:
    assert not Path("/etc/arreio-test").exists()
    home = Path(tempfile.mkdtemp(prefix="arreio-home-", dir="/var/tmp"))  # outside /tmp: visible, read-only
    try:
        result = shell(root, 'touch /etc/arreio-test; touch "$HOME/x"; echo done', env={"HOME": str(home)})
        lines = result.content.splitlines()
        assert lines[:2] == [
            "touch: cannot touch '/etc/arreio-test': Read-only file system",
            f"touch: cannot touch '{home}/x': Read-only file system",
        ]
        assert "[sandbox: a 'Read-only file system'" in result.content  # the model is told why
        assert not Path("/etc/arreio-test").exists() and not (home / "x").exists()
    finally:
        shutil.rmtree(home)


@requires_sandbox
def test_root_cannot_remount_its_way_out(root: Path) -> None:
    """As root, bwrap would keep CAP_SYS_ADMIN, and `mount -o remount,rw /` reached the host's /usr."""
    target = Path(f"/usr/arreio-remount-{uuid.uuid4().hex[:8]}")
    try:
        result = shell(root, f"mount -o remount,rw / 2>/dev/null; touch {target}; grep CapEff /proc/self/status")
        assert "CapEff:\t0000000000000000" in result.content
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


@requires_sandbox
def test_a_home_under_tmp_outside_the_working_directory_is_out_of_reach(tmp_path: Path, root: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    result = shell(root, 'touch "$HOME/x"', env={"HOME": str(home)})
    assert result.is_error and not (home / "x").exists()


@requires_sandbox
def test_the_working_directory_is_writable_in_workspace_write_only(root: Path) -> None:
    result = shell(root, "mkdir -p sub && echo hi > sub/a.txt && cat sub/a.txt")
    assert result.content == "hi\nexit code: 0" and (root / "sub" / "a.txt").read_text() == "hi\n"
    refused = shell(root, "echo no > b.txt", mode="read-only")
    assert refused.is_error and "Read-only file system" in refused.content and "nothing is writable" in refused.content
    assert not (root / "b.txt").exists()
    assert shell(root, "cat sub/a.txt", mode="read-only").content == "hi\nexit code: 0"  # reading still works


@requires_sandbox
def test_state_folder_and_git_stay_read_only_inside_the_working_directory(root: Path) -> None:
    (root / ".arreio").mkdir()
    (root / ".arreio" / "config.yaml").write_text("model: offline\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    command = (
        "echo 'sandbox: {mode: off}' >> .arreio/config.yaml; echo '[core] fsmonitor = evil' >> .git/config; "
        "rm -rf .git; mv .arreio elsewhere; touch .git/hooks-pre-commit; echo finished"
    )
    result = shell(root, command)
    assert "finished" in result.content
    assert (root / ".arreio" / "config.yaml").read_text() == "model: offline\n"
    assert (root / ".git" / "config").read_text() == "[core]\n"
    assert not (root / "elsewhere").exists() and not (root / ".git" / "hooks-pre-commit").exists()


@requires_sandbox
def test_a_missing_state_folder_cannot_be_planted(root: Path) -> None:
    result = shell(root, "mkdir -p .arreio && echo 'sandbox: {mode: off}' > .arreio/config.yaml")
    assert result.is_error and not (root / ".arreio" / "config.yaml").exists()


@requires_sandbox
@pytest.mark.parametrize("network", [False, True])
def test_network_only_when_allowed(root: Path, network: bool) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:  # a real listener on the host's loopback
        port = server.getsockname()[1]
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), 1); print('connected')"
        # the real interpreter, not a venv's link to it: the sandbox's /tmp is private, so a venv
        # under the host's /tmp (a CI clone) is not there
        probe = f'{os.path.realpath(sys.executable)} -c "{connect}"'
        result = shell(root, probe, network=network)
    if network:
        assert result.content == "connected\nexit code: 0"
    else:
        assert result.is_error and "ConnectionRefusedError" in result.content  # the sandbox's own, empty loopback


@requires_sandbox
@pytest.mark.slow
def test_a_background_child_does_not_outlive_the_call(root: Path) -> None:
    tag = f"arreio-bg-{uuid.uuid4().hex[:8]}"
    beat = (
        "setsid bash -c 'while :; do date +%s%N > beat; sleep 0.2; done' >/dev/null 2>&1 & "
        f"{sleeper(tag)} sleep 0.5; echo $!"
    )
    result = shell(root, beat)
    assert result.content.endswith("exit code: 0")
    assert gone(tag)
    first = (root / "beat").read_text()
    time.sleep(0.8)
    assert (root / "beat").read_text() == first  # nothing is writing it any more


@requires_sandbox
def test_unsandboxed_the_same_child_survives(root: Path) -> None:
    """The control for the test above: the /proc scan does find a survivor when there is one."""
    tag = f"arreio-bg-{uuid.uuid4().hex[:8]}"
    shell(root, f"{sleeper(tag)} sleep 0.3", mode="off")
    survivors = tagged(tag)
    try:
        assert survivors
    finally:
        for pid in survivors:
            os.kill(pid, 9)


@requires_sandbox
def test_tmp_is_private(root: Path) -> None:
    name = f"/tmp/arreio-private-{uuid.uuid4().hex}"
    result = shell(root, f"echo inside > {name} && cat {name}")
    assert result.content == "inside\nexit code: 0"
    assert not Path(name).exists()


@requires_sandbox
@pytest.mark.slow
def test_the_timeout_still_kills_and_keeps_head_and_tail(root: Path) -> None:
    tag = f"arreio-to-{uuid.uuid4().hex[:8]}"
    ctx = RunContext(cwd=root, env={"PATH": PATH}, settings=Settings(tools={"shell_output_cap": 1000}))
    result = asyncio.run(
        run_tool(
            ToolRegistry([Shell()]),
            "shell",
            {  # the 600 s sleep is never waited out
                "command": f"echo FIRST; seq 1 20000; echo LAST; {sleeper(tag)} sleep 600",
                "timeout_s": 1,
            },
            ctx,
        )
    )
    assert result.is_error and "timed out after 1 s" in result.content
    assert result.content.startswith("FIRST\n1\n2\n") and "chars omitted …]" in result.content
    assert "20000\nLAST\n" in result.content
    assert gone(tag)


@requires_sandbox
def test_a_cancel_ends_the_whole_sandbox(root: Path) -> None:
    tag = f"arreio-cx-{uuid.uuid4().hex[:8]}"
    ctx = RunContext(cwd=root, env={"PATH": PATH})

    async def scenario() -> None:
        task = asyncio.create_task(
            run_tool(ToolRegistry([Shell()]), "shell", {"command": f"{sleeper(tag)} touch started; sleep 30"}, ctx)
        )
        for _ in range(100):
            await asyncio.sleep(0.05)
            if (root / "started").exists():
                break
        assert tagged(tag)  # the child is running in the sandbox when the cancel comes
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert gone(tag)


def test_mode_off_runs_as_today(tmp_path: Path, root: Path) -> None:
    result = shell(root, "echo $$; touch ../outside.txt", mode="off")
    assert result.content.splitlines()[0] != "2"  # a host pid, not a PID namespace's
    assert (tmp_path / "outside.txt").exists()


def test_where_it_cannot_start_shell_runs_unsandboxed(tmp_path: Path, root: Path) -> None:
    result = shell(root, "touch ../outside.txt && echo ran", probe=refuse)
    assert result.content == "ran\nexit code: 0" and (tmp_path / "outside.txt").exists()


# -- saying so, once -------------------------------------------------------------------------------
def _run(work: Path, env: dict[str, str], feature: SandboxFeature | None = None, **settings) -> list:
    work.mkdir(parents=True, exist_ok=True)
    if settings:
        (work / ".arreio").mkdir(exist_ok=True)
        (work / ".arreio" / "config.yaml").write_text(json.dumps(settings))
    calls = [{"name": "shell", "arguments": {"command": f"echo {n}"}} for n in ("one", "two")]
    provider = ScriptedProvider([{"tool_calls": calls[:1]}, {"tool_calls": calls[1:]}, {"text": "done"}])
    deps = PipelineDeps(clock=FixedClock(), provider_factory=provider_factory(provider))
    if feature is not None:
        deps.features = [feature if isinstance(f, SandboxFeature) else f for f in deps.features]
    options = RunOptions(goal_text="# Say hello\n", cwd=work, env={"HOME": str(work.parent / "home"), **env}, yes=True)
    return asyncio.run(run_to_end(options, deps))


def _sandbox_warnings(events: list) -> list[str]:
    return [e.message for e in events if e.type == "warning" and e.code == "sandbox"]


def test_without_bwrap_the_run_says_so_exactly_once(tmp_path: Path) -> None:
    nobin = tmp_path / "no-bwrap-here"
    nobin.mkdir()
    events = _run(tmp_path / "work", {"PATH": str(nobin)})
    warned = _sandbox_warnings(events)
    assert len(warned) == 1 and "UNSANDBOXED" in warned[0] and "not installed" in warned[0]
    assert [e.type for e in events].count("tool_end") == 2 and events[-1].verdict == "success"
    report = json.loads((tmp_path / "work" / events[-1].report_path).read_text())
    assert report["warnings"].count(warned[0]) == 1


def test_namespaces_refused_is_said_once_and_mode_off_says_nothing(tmp_path: Path) -> None:
    refused = _run(tmp_path / "a", {"PATH": PATH}, SandboxFeature(refuse))
    assert len(_sandbox_warnings(refused)) == 1 and "namespaces refused" in _sandbox_warnings(refused)[0]
    nobin = tmp_path / "empty"
    nobin.mkdir()
    assert _sandbox_warnings(_run(tmp_path / "b", {"PATH": str(nobin)}, sandbox={"mode": "off"})) == []


@requires_sandbox
def test_a_sandboxed_run_says_nothing(tmp_path: Path) -> None:
    assert _sandbox_warnings(_run(tmp_path / "work", {"PATH": PATH})) == []


# -- arreio sandbox status -----------------------------------------------------------------------
def test_status_says_what_is_active(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from arreio.cli.app import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ARREIO_HOME", raising=False)
    shown = json.loads(CliRunner().invoke(app, ["sandbox", "status", "--json"]).stdout)
    assert shown["mode"] == "workspace-write" and shown["network"] is False
    assert shown["active"] is _FOUND.ok and shown["unavailable"] == _FOUND.reason
    assert str(tmp_path / ".arreio") in shown["protected"] and str(tmp_path / ".git") in shown["protected"]
    (tmp_path / ".arreio").mkdir()
    (tmp_path / ".arreio" / "config.yaml").write_text("sandbox: {mode: off}\n")
    text = CliRunner().invoke(app, ["sandbox", "status"]).stdout
    assert "mode: off" in text and "unsandboxed" in text


def test_the_offline_model_which_never_runs_shell_is_not_warned_about_a_missing_sandbox(
    tmp_path: Path, arreio_env: dict
) -> None:
    from tests.conftest import run_cli

    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("# Notes\n\nalpha\n")
    nobin = tmp_path / "bin"
    nobin.mkdir()
    for tool in ("bash", "sh", "git"):
        (nobin / tool).symlink_to(Path("/usr/bin" if Path(f"/usr/bin/{tool}").exists() else "/bin") / tool)
    env = {**arreio_env, "PATH": str(nobin)}
    done = run_cli(work, env, "run", "Read notes.md and write a summary to out.md", "--offline")
    assert done.returncode == 0 and "UNSANDBOXED" not in done.stderr, done.stderr
    # a sandbox turned off in config is still said, whatever the model
    (work / ".arreio" / "config.yaml").write_text("sandbox: {mode: 'off'}\n")
    off = run_cli(work, env, "run", "Read notes.md and write a summary to out2.md", "--offline")
    assert off.returncode == 0 and "sandbox.mode: off" in off.stderr, off.stderr

"""One user hook run as a process: the event as JSON on stdin, its exit code, stdout and stderr back.

The hook runs on the host with the user's rights (unless `sandbox: true`), in the working directory,
with an environment made for it: the run's, without arreio's credentials (`agent_env`: provider keys
never, other secret-shaped names only when `hooks.env_passthrough` names them), a PATH without the
entries the agent can write (so a program the hook starts by name is not one the agent planted),
`PYTHONSAFEPATH=1` (a `python -m tool` hook does not import modules from the working directory), and
`ARREIO_HOOK_EVENT` / `ARREIO_PROJECT_DIR`. It gets its own process group; at its timeout, or when
the run is cancelled, the whole group is killed — nothing it started outlives it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arreio.engine.core.programs import agent_writable, trusted_path, trusted_which
from arreio.engine.walls.agent_env import agent_env

OUTPUT_CAP = 64_000  # characters of stdout / stderr kept (a hook's output is a message, not a log)
BLOCK = 2  # the exit code that blocks (as Claude Code's hooks)


@dataclass
class HookRun:
    """What a hook did: `exit_code` None when it did not finish (`timed_out`) or could not start (`error`)."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str = ""

    @property
    def reply(self) -> dict[str, Any]:
        """Its stdout as a JSON object when it exited 0 with one (`{"decision": "block", ...}`), else {}."""
        text = self.stdout.strip()
        if self.exit_code != 0 or not text.startswith("{"):
            return {}
        try:
            value = json.loads(text)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    @property
    def blocked(self) -> bool:
        return self.exit_code == BLOCK or str(self.reply.get("decision", "")).lower() in ("block", "deny")

    @property
    def reason(self) -> str:
        """What a blocking hook says why: its JSON `reason`, else its stderr (then stdout)."""
        reply = self.reply
        text = reply.get("reason") or (self.stderr if self.exit_code == BLOCK else "") or self.stdout
        return str(text).strip()

    @property
    def context(self) -> str:
        """Text the hook adds for the model: JSON `additionalContext` (also under `hookSpecificOutput`),
        or the stderr of an exit 2 where the moment cannot block (post_tool_use)."""
        reply = self.reply
        inner = reply.get("hookSpecificOutput")
        extra = reply.get("additionalContext") or (inner.get("additionalContext") if isinstance(inner, dict) else None)
        return str(extra or "").strip()

    @property
    def outcome(self) -> str:
        """One word for the journal: ok, blocked, error, timeout, not_run."""
        if self.error:
            return "not_run"
        if self.timed_out:
            return "timeout"
        if self.blocked:
            return "blocked"
        return "ok" if self.exit_code == 0 else "error"

    def problem(self) -> str:
        """One line for a warning about a hook that failed (not one that blocked on purpose)."""
        if self.error:
            return self.error
        if self.timed_out:
            return "timed out"
        tail = " | ".join((self.stderr or self.stdout).strip().splitlines()[-3:])
        return f"exited {self.exit_code}" + (f": {tail[:300]}" if tail else "")


def hook_env(
    env: Mapping[str, str], cwd: Path, moment: str, passthrough: Sequence[str] = (), writable_roots: Sequence[str] = ()
) -> dict[str, str]:
    """The environment a hook runs with (module docstring)."""
    out = agent_env(env, passthrough)
    out["PATH"] = trusted_path(env, agent_writable(cwd, env, writable_roots))
    out["PYTHONSAFEPATH"] = "1"
    out["ARREIO_HOOK_EVENT"] = moment
    out["ARREIO_PROJECT_DIR"] = str(cwd)
    return out


def _cap(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return text if len(text) <= OUTPUT_CAP else text[:OUTPUT_CAP] + f"\n[… cut at {OUTPUT_CAP} characters]"


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def run_hook(
    argv: list[str],
    payload: dict[str, Any],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float,
    pass_fds: tuple[int, ...] = (),
) -> HookRun:
    """Run one hook to its end or its timeout, without blocking the event loop; a cancel kills it."""
    data = json.dumps(payload, ensure_ascii=False, default=str).encode()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            pass_fds=pass_fds,
        )
    except OSError as error:
        return HookRun(None, error=f"could not start: {error.strerror or error}")
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), timeout=timeout_s)
    except TimeoutError:
        _kill_group(proc.pid)
        await proc.wait()
        return HookRun(None, timed_out=True)
    except BaseException:
        _kill_group(proc.pid)
        raise
    _kill_group(proc.pid)  # a child it left behind goes with it
    return HookRun(proc.returncode, _cap(out), _cap(err))


def run_hook_sync(
    argv: list[str], payload: dict[str, Any], *, cwd: Path, env: dict[str, str], timeout_s: float
) -> HookRun:
    """The same, for the moments the conveyor reaches outside the event loop's awaits (the session's
    start, the run's end)."""
    data = json.dumps(payload, ensure_ascii=False, default=str).encode()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        return HookRun(None, error=f"could not start: {error.strerror or error}")
    try:
        out, err = proc.communicate(data, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.communicate()
        return HookRun(None, timed_out=True)
    except BaseException:
        _kill_group(proc.pid)
        raise
    _kill_group(proc.pid)
    return HookRun(proc.returncode, _cap(out), _cap(err))


def sandboxed_argv(call: Any, argv: list[str], env: Mapping[str, str], writable: Sequence[Path]) -> list[str] | None:
    """`argv` inside the run's sandbox call (engine/tools/sandbox/plan.py), or None when no sandbox runs."""
    bash = trusted_which("bash", env, writable) or "/bin/bash"
    return call.argv(bash, shlex.join(argv))

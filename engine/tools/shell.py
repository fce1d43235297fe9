"""shell: run a bash command in the working directory, with a timeout, an output cap and a blocklist.

Where the OS sandbox can run (`engine/tools/sandbox.py`, on by default) the command runs under
bubblewrap: writes only in the working directory, no network unless allowed, and its own PID
namespace, so nothing it starts outlives the call — not even a `setsid … &` child.

The process gets its own process group, so a timeout or a cancel (Ctrl-C) kills the command *and*
everything it started (SIGTERM, a short grace, then SIGKILL). Its environment is `ctx.env`, passed
explicitly: the run's copy of the environment, taken as it starts, so nothing the process puts in
`os.environ` later reaches a command (the knowledge base sets two OpenMP settings there while its
model loads, and takes them out again). The tool enforces its own timeout (the chain's is off) so it
can kill the group and still return what the command printed.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import signal

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core.programs import trusted_which
from arreio.engine.tools.base import Tool, ToolError, ToolResult
from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.sandbox import Probe, refusal_hint, run_sandbox
from arreio.engine.walls.blocklist import blocked_by

MAX_TIMEOUT_S = 600.0
KILL_GRACE_S = 2.0
# After the shell exits, a background child may still hold the pipe open; wait this long for EOF.
DRAIN_GRACE_S = 1.0


class HeadTail:
    """Keeps the first and the last part of a stream of text, counting what falls in between.

    Memory stays bounded by `cap` however much the command prints (`yes` runs for minutes).
    """

    FULL_CAP = 5_000_000  # chars of the whole output kept for a result set; beyond it only head and tail

    def __init__(self, cap: int) -> None:
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = ""
        self.tail = ""
        self.total = 0
        self._full: list[str] | None = []
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes, *, final: bool = False) -> None:
        text = self._decoder.decode(data, final=final)
        if not text:
            return
        self.total += len(text)
        if self._full is not None:
            self._full.append(text)
            if self.total > self.FULL_CAP:
                self._full = None
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-self.tail_cap :]

    def render(self) -> str:
        omitted = self.total - len(self.head) - len(self.tail)
        if omitted <= 0:
            return self.head + self.tail
        return f"{self.head}\n[… {omitted} chars omitted …]\n{self.tail}"

    @property
    def full(self) -> str | None:
        """Everything printed, when it was cut for the model and is small enough to keep."""
        if self._full is None or self.total <= len(self.head) + len(self.tail):
            return None
        return "".join(self._full)


class ShellInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1)
    timeout_s: float | None = Field(None, gt=0, description="Default 120, at most 600.")


class Shell(Tool):
    name = "shell"
    description = (
        "Run a bash command in the working directory; returns its output and exit code. No stdin "
        "(pass -y); sandboxed: writes only there, no network."
    )
    input_model = ShellInput
    sensitive = True
    repeat = "few"
    timeout_s = None  # the tool enforces its own, so it can kill the group and keep the output

    def __init__(self, probe: Probe | None = None) -> None:
        self.probe = probe  # None: the real bwrap probe (tests pass one that says "cannot start")

    async def execute(self, args: ShellInput, ctx: RunContext) -> ToolResult:
        rule = blocked_by(args.command)
        if rule is not None:
            return ToolResult(
                f"refused: the command matches blocklist rule '{rule.name}' ({rule.why}); it was not run", is_error=True
            )
        settings = ctx.settings.tools
        timeout = args.timeout_s or settings.shell_timeout_s
        capped = timeout > MAX_TIMEOUT_S
        timeout = min(timeout, MAX_TIMEOUT_S)
        cap = settings.shell_output_cap

        output = HeadTail(cap)
        sandbox = run_sandbox(ctx, self.probe)
        bash = trusted_which("bash", ctx.env, sandbox.writable) or "/bin/bash"
        call = sandbox.start()
        try:
            result = await self._run(args.command, bash, call, ctx, output, timeout, capped)
        finally:
            notes = sandbox.finish(call)
        if notes:
            result.content = "\n".join([result.content, *notes])
            result.is_error = result.is_error or any(note.startswith("refused:") for note in notes)
        return result

    async def _run(
        self,
        command: str,
        bash: str,
        call,
        ctx: RunContext,
        output: HeadTail,  # noqa: ANN001
        timeout: float,
        capped: bool,
    ) -> ToolResult:
        plan = call.plan
        # Our own pipe rather than asyncio's: Process.wait() waits for its pipes to close, which a
        # background child (`server &`) can hold open forever; this one we can stop reading.
        read_fd, write_fd = os.pipe()
        spawn: dict = {
            "cwd": str(ctx.cwd),
            "env": call.env,  # the run's environment without arreio's credentials (agent_env.py)
            "stdin": asyncio.subprocess.DEVNULL,
            "stdout": write_fd,
            "stderr": write_fd,
            "start_new_session": True,  # its own process group: one killpg reaches every child
            "pass_fds": call.pass_fds,  # the sandbox's seccomp filter, read by bwrap
        }
        if plan is None:
            start = asyncio.create_subprocess_shell(command, executable=bash, **spawn)
        else:  # bwrap leads the group (after the limits' prologue execs it); killing it ends the PID namespace
            start = asyncio.create_subprocess_exec(*call.argv(bash, command), **spawn)
        spawning = asyncio.ensure_future(start)
        try:
            proc = await asyncio.shield(spawning)
        except asyncio.CancelledError:
            # Ctrl-C while the process starts: asyncio alone kills only the group's leader, which
            # left the command's children (or a sandbox's inner bwrap, parented to init) running.
            await _kill_once_started(spawning)
            raise
        except OSError as exc:
            os.close(read_fd)
            raise ToolError(f"cannot start bash: {exc.strerror or exc}") from None
        finally:
            os.close(write_fd)
        loop = asyncio.get_running_loop()
        eof = loop.create_future()
        pipe = os.fdopen(read_fd, "rb", buffering=0)
        transport: asyncio.BaseTransport | None = None
        timed_out = False
        undrained = False
        try:
            transport, _ = await loop.connect_read_pipe(lambda: _Collector(output, eof), pipe)
            try:
                async with asyncio.timeout(timeout):
                    await proc.wait()
            except TimeoutError:
                timed_out = True
                await _terminate_group(proc)
            done, _ = await asyncio.wait({eof}, timeout=DRAIN_GRACE_S)
            undrained = not done  # a background child keeps the pipe open; report what we have
        except BaseException:
            # Cancelled (Ctrl-C) or anything else: nothing of the command may outlive the turn.
            _signal_group(proc, signal.SIGKILL)
            await _reap(proc)
            raise
        finally:
            if transport is not None:
                transport.close()
            else:
                pipe.close()
        output.feed(b"", final=True)
        shown = output.render()
        hint = refusal_hint(shown, plan) if plan is not None else None
        result = _result(shown, proc.returncode, timed_out, timeout, capped, undrained, hint)
        result.full = output.full
        return result


class _Collector(asyncio.Protocol):
    """Feeds what the command prints into a `HeadTail`; resolves `eof` when the pipe closes."""

    def __init__(self, output: HeadTail, eof: asyncio.Future[None]) -> None:
        self.output = output
        self.eof = eof

    def data_received(self, data: bytes) -> None:
        self.output.feed(data)

    def eof_received(self) -> bool:
        self._finish()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()

    def _finish(self) -> None:
        if not self.eof.done():
            self.eof.set_result(None)


def _signal_group(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    try:
        os.killpg(proc.pid, sig)  # start_new_session made pid the group id
    except (ProcessLookupError, PermissionError):
        pass


async def _kill_once_started(spawning: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """See a cancelled start through, then kill the whole group it made and reap it."""
    try:
        proc = await spawning
    except (OSError, asyncio.CancelledError):
        return
    _signal_group(proc, signal.SIGKILL)
    await _reap(proc)


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Collect the killed shell so no zombie or open transport outlives the call; bounded, and a
    second cancel during it still propagates."""
    try:
        async with asyncio.timeout(KILL_GRACE_S):
            await proc.wait()
    except TimeoutError:
        pass


async def _terminate_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the group, give it a moment to clean up, then SIGKILL whatever is left."""
    _signal_group(proc, signal.SIGTERM)
    try:
        async with asyncio.timeout(KILL_GRACE_S):
            await proc.wait()
    except TimeoutError:
        pass
    # Children may ignore SIGTERM even when the shell itself has gone.
    _signal_group(proc, signal.SIGKILL)
    await proc.wait()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _result(
    text: str, code: int | None, timed_out: bool, timeout: float, capped: bool, undrained: bool, hint: str | None = None
) -> ToolResult:
    body = text.rstrip("\n") if text.strip() else "(no output)"
    notes: list[str] = [hint] if hint else []
    if capped:
        notes.append(f"[timeout capped at {MAX_TIMEOUT_S:g} s]")
    if undrained and not timed_out:
        notes.append(
            "[a background process still holds the output open; what it prints later is not "
            "shown — redirect its output to a file]"
        )
    if timed_out:
        notes.append(
            f"[timed out after {timeout:g} s; the command and its child processes were killed; "
            "output above is what it printed before]"
        )
        first = text.strip().splitlines()[0] if text.strip() else ""
        said = f"timed out after {timeout:g} s" + (f": {first}" if first else " (no output)")
        return ToolResult("\n".join([body, *notes]), is_error=True, headline=said)
    exit_line = f"exit code: {code}"
    if code is not None and code < 0:
        exit_line += f" (killed by signal {_signal_name(-code)})"
    return ToolResult("\n".join([body, *notes, exit_line]), is_error=code != 0)

"""Gates judge a run's result: `command`, `file`, `promise`, `validator` (docs/architecture.md section 2).

`evaluate_gate` never raises for an ordinary failure: a gate that cannot decide (a judge error, a
timeout) fails with a detail that says why. The judge is a port: the offline family scores
deterministically; a real model can be asked through the provider layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from arreio.engine.checkpoints.plan import may_change
from arreio.engine.core import events as ev
from arreio.engine.core.messages import Message
from arreio.engine.core.model_io import ModelRequest
from arreio.engine.core.nesting import json_loads
from arreio.engine.core.ports import RunChanges
from arreio.engine.core.programs import trusted_which
from arreio.engine.core.regular_file import Limit, UnfitFile, read_bytes
from arreio.engine.core.wording import counted
from arreio.engine.judgement.gate_spec import GateSpec
from arreio.engine.judgement.promises import check_promises
from arreio.engine.loop.outcome import Outcome
from arreio.engine.providers.offline.goal import goal_files
from arreio.engine.providers.oneshot import ask
from arreio.engine.walls.agent_env import agent_env

if TYPE_CHECKING:
    from arreio.engine.tools.sandbox import RunSandbox


@dataclass
class GateInputs:
    cwd: Path
    goal: str
    final_text: str
    messages: list[Message] = field(default_factory=list)
    env: Mapping[str, str] = field(default_factory=dict)
    since: float | None = None  # the run's start (wall clock): files changed after it count as written
    # The run's sandbox (`tools/sandbox`): command gates run in it, as `shell` does. None: no sandbox
    # was asked for (a gate evaluated on its own, outside a run).
    sandbox: RunSandbox | None = None
    # Where no sandbox can run and the run may have changed files: "refuse" fails the gate, "warn" runs it.
    unsandboxed: str = "warn"
    warnings: list[str] = field(default_factory=list)  # said by the gates, for the run's events
    # What the run changed as its checkpoints recorded it (None: not recorded, or the session began
    # before this run — an earlier run's shell writes are not in this run's records).
    changes: RunChanges | None = None


@dataclass(frozen=True)
class GateOutcome:
    gate: str
    passed: bool
    detail: str


class Judge(Protocol):
    """Scores a result in [0, 1] with a reason."""

    async def score(self, inputs: GateInputs) -> tuple[float, str]: ...


class OfflineJudge:
    """Deterministic score from what exists: the goal's output files present and non-empty (60%),
    an answer given (20%), tool calls that succeeded (20%)."""

    async def score(self, inputs: GateInputs) -> tuple[float, str]:

        _, outputs = goal_files(inputs.goal)
        present = [p for p in outputs if (inputs.cwd / p).is_file() and (inputs.cwd / p).stat().st_size > 0]
        out_share = len(present) / len(outputs) if outputs else 1.0
        results = [m.tool_result_part for m in inputs.messages if m.role == "tool" and m.tool_result_part]
        ok_share = sum(not r.is_error for r in results) / len(results) if results else 1.0
        answered = 1.0 if inputs.final_text.strip() else 0.0
        score = round(0.6 * out_share + 0.2 * answered + 0.2 * ok_share, 4)
        answer = "given" if answered else "missing"
        reason = f"outputs {len(present)}/{len(outputs)}, answer {answer}, tool calls ok {ok_share:.0%}"
        return score, reason


JUDGE_PROMPT = """You judge whether an agent's work meets its goal. Be strict and concrete.
Goal:
{goal}

The agent's final answer:
{answer}

Tool calls it made (name → outcome):
{calls}

Answer with JSON only: {{"score": <0..1, how fully and correctly the goal is met>, "reason": "<one sentence>"}}"""


class ModelJudge:
    """Asks a model for a score through the provider layer. Any failure raises: the gate then fails
    with the reason (a judge that cannot decide never passes a gate)."""

    def __init__(self, provider: Any, model: str) -> None:
        self.provider, self.model = provider, model

    async def score(self, inputs: GateInputs) -> tuple[float, str]:

        results = {
            m.tool_result_part.call_id: m.tool_result_part
            for m in inputs.messages
            if m.role == "tool" and m.tool_result_part
        }
        calls = [
            f"- {c.name} → {'error' if results.get(c.id) and results[c.id].is_error else 'ok'}"
            for m in inputs.messages
            if m.role == "assistant"
            for c in m.tool_calls
        ][-40:]
        prompt = JUDGE_PROMPT.format(
            goal=inputs.goal.strip()[:4000], answer=inputs.final_text.strip()[:4000], calls="\n".join(calls) or "(none)"
        )
        request = ModelRequest(model=self.model, messages=[Message.user(prompt)], max_tokens=300)
        text = (await ask(self.provider, request)).raise_for_error()
        body = text[text.find("{") : text.rfind("}") + 1]
        data = json_loads(body)  # bounded depth: the judged text is the model's
        score = float(data["score"])
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"score {score} is outside [0, 1]")
        return score, str(data.get("reason", ""))[:300]


async def evaluate_gate(spec: GateSpec, inputs: GateInputs, judge: Judge | None = None) -> GateOutcome:
    if spec.kind == "command":
        return await _command(spec, inputs)
    if spec.kind == "file":
        return _file(spec, inputs)
    if spec.kind == "promise":
        return _promise(spec, inputs)
    return await _validator(spec, inputs, judge or OfflineJudge())


TAIL_BYTES = 64 * 1024  # what a command gate keeps of its output: the verdict quotes its last lines
READ_GRACE_S = 1.0  # after the command exits, how long what it printed may take to be read


async def _command(spec: GateSpec, inputs: GateInputs) -> GateOutcome:
    """The command's exit code judges. It runs in the run's sandbox, as `shell` does — a gate like
    `pytest` or `python3 -c 'import calc'` executes what the agent wrote — with the agent's
    environment (no credentials), the call's limits, and its own timeout. Where no sandbox can run
    and the run may have changed files, the gate says so loudly, or fails when it must not run
    unsandboxed (`sandbox.unsandboxed_gates`; batch by default).

    Its output is read as it comes, keeping only the tail (a gate printing 400 MB held it all: 1.7 GB
    of memory); the gate ends when the command exits — a background child it left (`server & echo
    started`) kept the output open, and the gate waited for it until 'timed out' — and that child goes
    with the command's process group."""
    sandbox = inputs.sandbox
    call = sandbox.start() if sandbox is not None else None
    env = call.env if call is not None else agent_env(inputs.env)
    if call is None or call.plan is None:
        if sandbox is not None and _may_have_changed(inputs.messages) and sandbox.settings.mode != "off":
            why = sandbox.found.reason or "the sandbox cannot run here"
            if inputs.unsandboxed == "refuse":
                return GateOutcome(
                    spec.label,
                    False,
                    f"refused: the gate would run the agent's changes UNSANDBOXED "
                    f"({why}); set sandbox.unsandboxed_gates: warn to allow it",
                )
            inputs.warnings.append(f"command gate '{spec.label}' runs UNSANDBOXED on files the agent changed ({why})")
    try:
        return await _run_command(spec, inputs, call, env)
    finally:
        if sandbox is not None and call is not None:
            for note in sandbox.finish(call):
                inputs.warnings.append(f"command gate '{spec.label}': {note}")


def _may_have_changed(messages: list[Message]) -> bool:
    return any(may_change(c.name) for m in messages if m.role == "assistant" for c in m.tool_calls)


async def _run_command(spec: GateSpec, inputs: GateInputs, call: Any, env: dict[str, str]) -> GateOutcome:
    command = spec.command or ""
    argv = None
    if call is not None and call.plan is not None:
        bash = trusted_which("bash", inputs.env, inputs.sandbox.writable if inputs.sandbox else ()) or "/bin/bash"
        argv = call.argv(bash, command)
    spawn: dict[str, Any] = {
        "cwd": inputs.cwd,
        "env": env or None,
        "stdin": asyncio.subprocess.DEVNULL,
        "stdout": asyncio.subprocess.PIPE,
        "stderr": asyncio.subprocess.STDOUT,
        "start_new_session": True,
        "pass_fds": call.pass_fds if call is not None else (),
    }
    if argv is None:
        proc = await asyncio.create_subprocess_shell(command, **spawn)
    else:
        proc = await asyncio.create_subprocess_exec(*argv, **spawn)
    kept = bytearray()

    async def read() -> None:
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            kept.extend(chunk)
            if len(kept) > TAIL_BYTES:
                del kept[:-TAIL_BYTES]

    async def exited() -> None:
        # Not `proc.wait()`: on Python 3.11 it returns only once the output is closed as well, which
        # a background child holds open; the return code is there as soon as the command exits.
        while proc.returncode is None:
            await asyncio.sleep(0.02)

    reader = asyncio.ensure_future(read())
    try:
        await asyncio.wait_for(exited(), timeout=spec.timeout_s)
    except TimeoutError:
        _kill_group(proc.pid)
        reader.cancel()
        await proc.wait()
        return GateOutcome(spec.label, False, f"timed out after {spec.timeout_s:g}s")
    except asyncio.CancelledError:
        _kill_group(proc.pid)
        reader.cancel()
        raise
    # What it printed gets a moment to be read; a child still holding the output open then goes
    # with the command's group (nothing the gate started outlives it), which ends the output.
    for _ in range(2):
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(reader), timeout=READ_GRACE_S)
        _kill_group(proc.pid)
        if reader.done():
            break
    reader.cancel()
    tail = " | ".join(kept.decode("utf-8", "replace").strip().splitlines()[-3:])
    detail = f"exit {proc.returncode}" + (f": {tail[:300]}" if tail and proc.returncode else "")
    return GateOutcome(spec.label, proc.returncode == 0, detail)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _file(spec: GateSpec, inputs: GateInputs) -> GateOutcome:
    path = inputs.cwd / (spec.path or "")
    if not path.exists():
        return GateOutcome(spec.label, False, f"{spec.path} does not exist")
    if spec.pattern is None:
        return GateOutcome(spec.label, True, f"{spec.path} exists")
    try:
        # The agent made this file: a named pipe would block the gate, a device never end.
        text = read_bytes(path, limit=Limit.OUTPUT).decode("utf-8", errors="replace")
        matched = re.search(spec.pattern, text, re.MULTILINE) is not None
    except UnfitFile as exc:
        return GateOutcome(spec.label, False, f"cannot check {exc.because(str(spec.path))}")
    except (OSError, re.error) as exc:
        return GateOutcome(spec.label, False, f"cannot check {spec.path}: {exc}")
    return GateOutcome(
        spec.label, matched, f"{spec.path} {'matches' if matched else 'does not match'} /{spec.pattern}/"
    )


def _promise(spec: GateSpec, inputs: GateInputs) -> GateOutcome:
    claims = check_promises(inputs.final_text, inputs.messages, inputs.cwd, inputs.since, inputs.changes)
    if not claims:
        return GateOutcome(spec.label, True, "no checkable claims in the final answer")
    broken = [c for c in claims if not c.kept]
    if not broken:
        return GateOutcome(
            spec.label, True, f"{counted(len(claims), 'claim')} checked: " + ", ".join(c.subject for c in claims)
        )
    listed = "; ".join(f"{c.subject} {c.why}" for c in broken)
    return GateOutcome(spec.label, False, f"the answer claims what is not so: {listed}")


async def _validator(spec: GateSpec, inputs: GateInputs, judge: Judge) -> GateOutcome:
    try:
        score, reason = await judge.score(inputs)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - a judge failure fails the gate, with the reason
        return GateOutcome(spec.label, False, f"the judge failed: {type(exc).__name__}: {exc}")
    ok = score >= spec.min
    sign = "≥" if ok else "<"
    said = f"score {score:.2f} {sign} threshold {spec.min:g} ({reason})"
    # A judge's score never overrides a checkable fact: a small model scored a missing file 1.00.
    broken = [
        c
        for c in check_promises(inputs.final_text, inputs.messages, inputs.cwd, inputs.since, inputs.changes)
        if not c.kept
    ]
    if ok and broken:
        facts = "; ".join(f"{c.subject} {c.why}" for c in broken)
        return GateOutcome(spec.label, False, f"{said}, but the answer claims what is not so: {facts}")
    return GateOutcome(spec.label, ok, said)


async def run_gates(
    gates: Sequence[GateSpec], inputs: GateInputs, judge: Judge | None, failures: list[str]
) -> AsyncIterator[ev.Event]:
    """Every gate yields a `gate_result`; failures are collected for the verdict. A broken promise
    is told by its failing `gate_result` and the run's message (invariant 6's honest warning), not
    by a third event repeating the same reason."""
    for spec in gates:
        outcome = await evaluate_gate(spec, inputs, judge)
        for warning in inputs.warnings:
            yield ev.Warning_(message=warning, code="gate_sandbox")
        inputs.warnings.clear()
        yield ev.GateResult(gate=outcome.gate, passed=outcome.passed, detail=outcome.detail)
        if not outcome.passed:
            failures.append(f"{outcome.gate} — {outcome.detail}")


def gated_outcome(outcome: Outcome, failures: list[str]) -> Outcome:
    """A successful outcome that failed gates becomes a failed one whose message holds every failed
    gate's reason — the one place a person (stderr) and a script (the report, `done`) read it."""
    if not failures:
        return outcome
    message = f"{len(failures)} gate(s) failed: " + "; ".join(failures)
    return Outcome.of("failed", message, outcome.final_text, final_json=outcome.final_json)
